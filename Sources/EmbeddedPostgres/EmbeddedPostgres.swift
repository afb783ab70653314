// The EmbeddedPostgres module; see ARCHITECTURE §2.
