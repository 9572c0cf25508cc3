"""The base every other package stands on: the one-line error and the one way
to run a command (errors), where the checks, site configs and references
in use are (paths), and the one CSV writer of every output file (csvfile).

Imports: nothing
"""
