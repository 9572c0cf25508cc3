"""Profiling, node facts and energy are one project class of a check, and
their hooks run where the judged check's hooks expect them: the job script
is complete before the launcher is wrapped, and the energy and MPI figures
exist before a disturbed run drops its references."""

from test_check_depth import _registered_checks

OBSERVING = ('observed', 'profiling', 'nodefacts', 'energy', 'instrumented')
OBSERVED_CHECKS = ('CGSolverCheck', 'CGScalingCheck', 'HPCCCheck', 'NodeCGCheck')


def _observing_classes(cls):
    modules = tuple(f'clusterbench.checks.plugins.{name}' for name in OBSERVING)
    return [k.__name__ for k in cls.__mro__ if k.__module__ in modules]


def test_an_observed_check_has_one_observing_class():
    checks = _registered_checks()
    for name in OBSERVED_CHECKS:
        assert _observing_classes(checks[name]) == ['Observed'], name


def test_the_observing_hooks_run_just_before_the_judged_last_ones():
    checks = _registered_checks()
    for name in OBSERVED_CHECKS:
        hooks = {
            stage: [fn.__name__ for fn in fns]
            for stage, fns in checks[name].pipeline_hooks().items()
        }
        assert hooks['post_setup'][-1] == '_observe_after_setup', name
        assert hooks['pre_run'][-2:] == ['_observe_before_run', '_wrap_launcher']
        assert hooks['pre_performance'][-2:] == [
            '_observe_before_performance',
            '_do_not_judge_a_disturbed_run',
        ]
        sanity = hooks['pre_sanity']
        assert sanity.index('_scheduler_verdict') < sanity.index(
            '_observe_before_sanity'
        ), name
