"""Infrastructure: configuration, database sessions, the embedded servers, the queue, migrations, secrets."""
