"""What runs leave behind and the programs that make and read it: ReFrame run
reports (runreport), the session details beside them (session), stored
sessions of the results database (history), re-judging stored outputs
(replay), running the suite (runner), the node lock of a measuring session
(nodelock), the keeper that ends what ReFrame leaves running (reaper), the
series of figures over sessions (series) and the samples that propose new
references (samples), and `clusterbench baseline`'s rounds and proposal
(baseline).
"""
