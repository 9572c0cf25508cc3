"""The base every other package stands on: the one-line error and the one way
to run a command (errors), where the checks, site configs and references
in use are (paths), and the one validator of the names that reach a job or
build script: modules, partitions, environments, features, launcher options
(scriptnames), the one CSV writer of every output file (csvfile), what
a figure's declaration is, with the closed set of units (figures), and what
a run broke as data, with the words derived from it (disturbance).
"""
