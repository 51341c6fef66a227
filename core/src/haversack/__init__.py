"""Haversack: a thin core for distributable LLM tool packs."""
