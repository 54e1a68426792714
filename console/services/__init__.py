"""The console's read models and operator services: plain functions on a session, no Flask, nothing commits."""
