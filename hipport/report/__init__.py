"""The report: one JSON model (SPEC's keys spelled once), rendered to files."""
