// The Postgres module; see ARCHITECTURE §2.
