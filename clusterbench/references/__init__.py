"""The reference figures in reference_data/: reading and validating the YAML
files (validate), choosing the directory in use (directory), looking up the
reference of one test case (lookup), and changing them safely: the
transactional store, its provenance and the proposal of new references from
run reports (store, provenance, update), the floor of each kind of figure
(floors) and the proposal as a reader reads it (proposalview).
"""
