"""ragreport: paired, evidence-grade comparison reports for two runs of a RAG assistant."""

__version__ = "0.1.0"
