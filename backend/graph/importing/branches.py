"""`if` blocks read from code: both branches end by assigning the same variable, and that
variable then names an `if` node of the condition and the two branch values. Variables that
only one branch (or the two differently) assigned are unusable after the block."""

from .problems import Unsupported
from .syntax import strip_bool


class IfReader:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)

    def if_block(self, stmt):
        """The variable the block binds (its if node), as the walker's statement() returns."""
        imp = self.imp
        meta = imp.node_comment(stmt.lineno, stmt.body[0].lineno - 1)
        cond = imp.exprs.operand_node(strip_bool(stmt.test))
        if not stmt.orelse:
            raise Unsupported("an if needs an else: both branches must assign the same variable")
        saved = dict(imp.env)
        exact, imp.random.exact = imp.random.exact, False  # both branches are read, one runs
        try:
            then_var = imp.statements(stmt.body)
            then_env = imp.env
            imp.env = dict(saved)
            else_var = imp.statements(stmt.orelse)
            else_env = imp.env
        finally:
            imp.random.exact = exact
        imp.current_line = stmt.lineno
        if then_var is None or then_var != else_var:
            raise Unsupported(
                "both branches of an if must end by assigning the same variable (y = ...)"
            )
        then_node, else_node = then_env.get(then_var), else_env.get(else_var)
        envs = (then_env, else_env)
        then_node = self._name_branch(then_node, then_var, "then", stmt.body, envs)
        else_node = self._name_branch(else_node, then_var, "else", stmt.orelse, envs)
        imp.env = _merged(saved, then_env, else_env)
        if then_node is None or else_node is None:
            imp.env[then_var] = None
            return then_var  # the branch's own line failed and was reported
        nid = imp.add_node(
            "if",
            {},
            [("condition", cond), ("then", then_node), ("else", else_node)],
            meta or then_var,
        )
        imp.env[then_var] = nid
        return then_var

    def _name_branch(self, node, var, branch, body, envs):
        """`y = <expr>` ending a branch without a node comment: y names the if node, so the
        branch's node is renamed y_then / y_else (in both branches' variables too)."""
        graph = self.imp.graph
        n = graph.nodes.get(node)
        if n is None or not n["auto"] or n["line"] != body[-1].lineno:
            return node
        new = graph.fresh_id(f"{var}_{branch}")
        graph.rename(node, new)
        for env in envs:
            for k, v in env.items():
                if v == node:
                    env[k] = new
        return new


def _merged(saved, then_env, else_env):
    """The variables after the block: one either branch changed keeps its new node only where
    the other branch agrees (or did not have it), else it is unusable (None)."""
    merged = dict(saved)
    for env in (then_env, else_env):
        for k, v in env.items():
            if k not in saved or saved[k] != v:
                other = else_env if env is then_env else then_env
                merged[k] = v if other.get(k, v) == v else None
    return merged
