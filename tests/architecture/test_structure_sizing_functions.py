"""HPL's sizing and the node count of a scaling series are functions the
checks' own hooks call, not plugin classes (issue 42: a check reads in one
place). Measured on the checks as ReFrame loads them from reframe_checks/.
"""

from test_check_depth import _project_classes, _registered_checks

#: The most project classes each of these checks may hold in its MRO.
DEPTH = {
    'HPCCScalingCheck': 5,
    'NPBScalingCheck': 7,
    'CGScalingCheck': 5,
    'HPLCheck': 6,
    'HPCCCheck': 4,
}


def test_no_sizing_or_scaling_plugin_in_any_check():
    for name, cls in _registered_checks().items():
        names = {k.__name__ for k in _project_classes(cls)}
        assert not names & {'HPLProblem', 'ScalingPlugin'}, (name, names)


def test_the_checks_lost_one_class_each():
    checks = _registered_checks()
    depth = {name: len(_project_classes(checks[name])) for name in DEPTH}
    too_deep = {n: d for n, d in depth.items() if d > DEPTH[n]}
    assert not too_deep, too_deep


def test_each_check_still_declares_the_sizing_and_scaling_variables():
    checks = _registered_checks()
    hpl = ('hpl_mem_fraction', 'hpl_nb', 'hpl_n', 'hpl_problem', 'hpl_order')
    for name in ('HPLCheck', 'HPCCCheck', 'HPCCScalingCheck'):
        assert set(hpl) <= set(checks[name]._rfm_var_space), name
    for name in ('HPCCScalingCheck', 'NPBScalingCheck', 'CGScalingCheck'):
        cls = checks[name]
        assert 'scaling_figure' in cls._rfm_var_space, name
        assert 'node_count' in cls._rfm_param_space.params, name
    assert checks['HPLCheck'].hpl_mem_fraction == 0.25
    assert checks['HPCCCheck'].hpl_mem_fraction == 0.035
    assert checks['HPCCScalingCheck'].scaling_figure == 'hpl'
    assert checks['CGScalingCheck'].scaling_figure == 'time'
