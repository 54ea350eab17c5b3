"""pytest loads this first for every test under the repository: it puts the repository root on
sys.path, so tests import the code as it is here (`engine`, `backend`, `wiregrad`) and the
helpers shared across the test folders as `tests._<name>`."""
