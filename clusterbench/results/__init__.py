"""Reading what sessions leave behind: ReFrame run reports (runreport, their
schema and retries), the session details beside them (details), a stored
session judged (judgedsession), stored sessions of the results database
(history), re-judging stored outputs (replay), the portable figures
(portable), the guidance of a machine without references (guide, suggested),
implausible figures (plausibility) and the samples that propose new
references (samples). Running a session is :mod:`clusterbench.sessions`.
"""
