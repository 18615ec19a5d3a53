"""Sibling writers of one study: HTML, JSON, Markdown and JUnit. None of them computes."""
