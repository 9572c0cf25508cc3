"""Parsers of upstream benchmark outputs, usable without ReFrame."""
