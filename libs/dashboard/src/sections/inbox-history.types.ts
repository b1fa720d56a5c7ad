// The page's history and stats shapes, apart from their readers: the public DashboardStateService
// names them, and its declarations must compile without the optional Holdfast packages (the
// readers' file imports the lookup, whose types name every one of them).

/** One outcome of a message as the page shows it. */
export interface DashboardHistoryEntry {
  at: string;
  outcome: string;
  attempt: number;
  node: string;
  error: string | null;
}

/** `api/inbox/history`: a message's attempts, oldest first (empty without the `history` option). */
export interface DashboardHistory {
  id: string;
  entries: DashboardHistoryEntry[];
}

/** `api/inbox/stats`: the minutes of the last hour that have figures (empty without `stats`). */
export interface DashboardStats {
  /** The database clock when read: the charts end here. */
  now: string;
  minutes: Array<{
    minute: string;
    delivered: number;
    failed: number;
    parked: number;
    depth: number | null;
    parkedNow: number | null;
    leader: string | null;
  }>;
}
