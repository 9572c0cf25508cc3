"""Parsers of upstream benchmark outputs, usable without ReFrame, each with
the declaration of the figures it records (``DECLARED``); the figures no
parser records (declarations) and the catalog of them all (catalog).
"""
