"""Hand-written content tables for the mini-vault generator."""
