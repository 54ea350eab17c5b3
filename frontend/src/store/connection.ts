// The page's one connection to the server (api/socket.ts): made on first use and kept for the
// page's life (socket.io-client reconnects it by itself). Every store sends through it;
// store/reactions.ts hands the events it pushes to the stores, for as long as the editor is
// mounted. This module is its only holder.
import { Connection } from "../api/socket";

let connection: Connection | null = null;

export function getConnection(): Connection {
  connection ??= new Connection();
  return connection;
}
