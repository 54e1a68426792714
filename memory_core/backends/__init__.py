"""Model backends behind one small interface (backends.base.ModelBackend), chosen by configuration."""
