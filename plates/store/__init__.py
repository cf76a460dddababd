"""What a site remembers: every read of `plates watch` and of the gateway, the plates as the site knows them, and
the visits they make, in SQLite or PostgreSQL (docs/store.md)."""
