"""Test helpers that are not tests: a fake OpenAI-compatible HTTP server (fake_openai)."""
