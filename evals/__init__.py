"""Evaluation datasets and their runners (`memoria eval ...`), and the demo data set."""
