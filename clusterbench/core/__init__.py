"""The base every other package stands on: the one-line error and the one way
to run a command (errors), and where the checks, site configs and references
in use are (paths).

Imports: nothing
"""
