"""RQ jobs: plain module-level functions that take ids and open their own session."""
