"""Generated hostile inputs to `compare`, `references check` and `report`
(issue 29): one line and a non-zero exit, never a traceback.

hypothesis draws each input from a valid run report or reference file
(tests/hostile.py): a wrong type at any level, NaN and the infinities, lone
surrogates and control characters in names, nesting 100000 deep, duplicate
keys, YAML aliases. The real entry point, ``clusterbench.cli.main``, runs in
this process (a subprocess costs ~1 s an input); a few fixed inputs show
that the real program, run as a user runs it, does the same; the billion
laughs run only there, under a memory limit.

Budget: each generated test draws at most ``CLUSTERBENCH_FUZZ_EXAMPLES``
inputs (default 40) and, once ``CLUSTERBENCH_FUZZ_SECONDS`` (default 25) have
passed, lets the rest go without running them: never a failure for being
slow. Under CI (``CI=true``) the draws are derandomized, the same on every
run; elsewhere they are seeded at random (``CLUSTERBENCH_FUZZ_SEED`` to repeat
a run) and the seed is printed.
"""

import contextlib
import dataclasses
import io
import os
import random
import resource
import shutil
import signal
import subprocess
import time
import traceback

import pytest
from badinput import assert_line
from conftest import PROJECT, fixtures_required
from hostile import (
    REFERENCE_FILES,
    Hostile,
    consistent_provenance,
    hostile_references,
    hostile_reports,
    laughs,
    provenance_of,
    valid_report,
    valid_text,
)
from hostile_trees import DEEP, to_json
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as seeded
from hypothesis import strategies as st
from rfm import tool
from test_reftransaction import REFERENCES, SITE_OPTIONS

from clusterbench import cli

EXAMPLES = int(os.environ.get('CLUSTERBENCH_FUZZ_EXAMPLES', '40'))
SECONDS = float(os.environ.get('CLUSTERBENCH_FUZZ_SECONDS', '25'))
SEED = int(os.environ.get('CLUSTERBENCH_FUZZ_SEED') or random.randrange(2**32))
DERANDOMIZED = fixtures_required()

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=DERANDOMIZED,
    database=None,
    print_blob=False,
    # Neither shrinking (one break of a valid input is small already) nor
    # "explain" (it traces every line of clusterbench): both take minutes.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)


def fuzz(test):
    """Settings, and the seed unless derandomized."""
    test = FUZZ(test)
    return test if DERANDOMIZED else seeded(SEED)(test)


class Budget:
    """Wall-clock budget of one generated test: when spent, the remaining
    inputs pass without running, unless one has failed (hypothesis runs it
    again to report it: it must fail again)."""

    def __init__(self, name):
        self.name, self.start, self.failed = name, None, False

    def spent(self):
        if self.start is None:
            self.start = time.monotonic()
            how = 'derandomized (CI)' if DERANDOMIZED else f'seed {SEED}'
            print(f'{self.name}: {how}, up to {EXAMPLES} inputs or {SECONDS:g} s')
        return not self.failed and time.monotonic() - self.start > SECONDS

    def running(self, body):
        try:
            body()
        except BaseException:
            self.failed = True
            raise


PREFIX = 'clusterbench: error: '


# ------------------------------------------------------------------ harness


@dataclasses.dataclass
class Outcome:
    code: object
    out: str
    err: str
    #: The last line of the traceback of an exception that escaped main().
    escaped: str = ''

    @property
    def text(self):
        return self.out + self.err


class Hung(Exception):
    """The command did not end within the harness's limit."""


def _hung(signum, frame):
    raise Hung()


def _stream(errors):
    # As a subprocess's stdout and stderr under a UTF-8 locale: stdout
    # refuses what it cannot encode (strict), stderr backslash-escapes it.
    return io.TextIOWrapper(io.BytesIO(), encoding='utf-8', errors=errors)


def _value(stream):
    stream.flush()
    return stream.buffer.getvalue().decode('utf-8', 'backslashreplace')


def run_cli(argv, limit=120):
    """``clusterbench ARGV`` in this process, through its real entry point
    (``clusterbench.cli.main``, what the console script calls): its exit code,
    stdout and stderr, and the last line of the traceback of anything but
    SystemExit that escaped. A hang is ended after *limit* s and is one."""
    out, err = _stream('strict'), _stream('backslashreplace')
    previous = signal.signal(signal.SIGALRM, _hung)
    signal.setitimer(signal.ITIMER_REAL, limit)
    code, escaped = None, ''
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(argv)
            except SystemExit as stop:
                code = stop.code
    except Hung:
        escaped = f'hung: no exit within {limit} s'
    except Exception as exc:  # what a user would see as a traceback
        escaped = traceback.format_exception_only(exc)[-1].strip()[:300]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if not escaped and code is None:
        code = 0
    return Outcome(code, _value(out), _value(err), escaped)


def real(argv, limit=60, memory=4 << 30):
    """``clusterbench ARGV`` as a user runs it, with its memory limited (an
    alias bomb must not take the machine) and a hang ended after *limit* s."""

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    try:
        done = subprocess.run(
            [tool('clusterbench'), *argv],
            capture_output=True,
            text=True,
            cwd=PROJECT,
            timeout=limit,
            preexec_fn=limited,
            errors='backslashreplace',
        )
    except subprocess.TimeoutExpired:
        return Outcome(None, '', '', f'hung: no exit within {limit} s')
    escaped = ''
    if 'Traceback' in done.stderr:
        escaped = done.stderr.strip().splitlines()[-1][:300]
    return Outcome(done.returncode, done.stdout, done.stderr, escaped)


def assert_one_line_or_judged(outcome, hostile, codes=(0, 1, 3)):
    """The property: either a normal outcome (a code of *codes*, no error
    line), or exit 2 with one line ``clusterbench: error: ...``; never a
    traceback; and never exit 0 for an input that is definitely invalid."""
    about = f'{hostile}: exit {outcome.code}\n{outcome.err[-2000:]}'
    assert not outcome.escaped, f'{hostile}: {outcome.escaped}'
    assert 'Traceback' not in outcome.text, about
    if outcome.code == 2:
        lines = outcome.err.strip('\n').split('\n')
        assert len(lines) == 1, about
        assert lines[0].startswith(PREFIX) and lines[0][len(PREFIX) :].strip(), about
    else:
        assert outcome.code in codes, about
        assert PREFIX not in outcome.err, about
    if hostile.definite:
        assert outcome.code != 0, about


# ------------------------------------------------------------- fixtures


@pytest.fixture(scope='module')
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp('fuzz')


@pytest.fixture(scope='module')
def refs(tmp_path_factory):
    """A copy of reference_data/ whose files each input breaks one at a time."""
    root = tmp_path_factory.mktemp('fuzzrefs') / 'refs'
    shutil.copytree(REFERENCES, root)
    return root


@pytest.fixture(scope='module', autouse=True)
def as_a_user():
    """From the project root, as the subprocesses; judged as ReFrame recorded
    (compare, report) unless --references."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(PROJECT)
        patch.delenv('RFM_REFERENCE_PREFIX', raising=False)
        yield


def write(path, text):
    # Lone surrogates written raw: bytes that are not UTF-8.
    with open(path, 'w', encoding='utf-8', errors='surrogatepass') as f:
        f.write(text)
    return str(path)


def contents(root):
    return {
        str(p): p.read_bytes()
        for p in sorted(root.rglob('*'))
        if p.is_file() and not p.name.endswith('.lock')
    }


# ------------------------------------------------------------ generated


COMPARE = Budget('compare')


@fuzz
@given(hostile=hostile_reports(), strict=st.booleans())
def test_compare_on_generated_hostile_reports(workdir, hostile, strict):
    if COMPARE.spent():
        return

    def body():
        path = write(workdir / 'r.json', hostile.text)
        outcome = run_cli(['compare', path, *(['--strict'] * strict)])
        assert_one_line_or_judged(outcome, hostile)

    COMPARE.running(body)


REPORT = Budget('report')


@fuzz
@given(hostile=hostile_reports())
def test_report_on_generated_hostile_reports(workdir, hostile):
    if REPORT.spent():
        return

    def body():
        path = write(workdir / 'r.json', hostile.text)
        html = workdir / 'out.html'
        html.unlink(missing_ok=True)
        outcome = run_cli(['report', path, '-o', str(html)])
        assert_one_line_or_judged(outcome, hostile, codes=(0,))
        # No half report beside a one-line error.
        assert html.exists() == (outcome.code == 0), (str(hostile), outcome.code)

    REPORT.running(body)


CHECK = Budget('references check')


@fuzz
@given(drawn=hostile_references())
def test_references_check_and_compare_on_generated_hostile_files(workdir, refs, drawn):
    if CHECK.spent():
        return
    rel, hostile = drawn
    valid = contents(refs)

    def body():
        write(refs / rel, hostile.text)
        if rel in REFERENCE_FILES:
            prov = consistent_provenance(rel, hostile.text)
            write(refs / provenance_of(rel), prov)
        before = contents(refs)
        outcome = run_cli(
            ['references', 'check', '--references', str(refs), *SITE_OPTIONS]
        )
        assert_one_line_or_judged(outcome, hostile, codes=(0, 1))
        assert contents(refs) == before, f'{hostile}: the references changed'
        if rel in REFERENCE_FILES:
            # compare reads them too: a valid report judged against them.
            report = write(workdir / 'valid.json', to_json(valid_report()))
            judged = run_cli(['compare', report, '--references', str(refs)])
            maybe = dataclasses.replace(hostile, definite=False)
            assert_one_line_or_judged(judged, maybe)

    try:
        CHECK.running(body)
    finally:
        for path, data in contents(refs).items():
            if valid.get(path) != data:
                with open(path, 'wb') as f:
                    f.write(valid[path])


# ------------------------------------------------ the real program agrees


def seen(outcome):
    """What a user sees: the exception that escaped, else the exit code and
    the error lines."""
    if outcome.escaped:
        return 'traceback', outcome.escaped
    errors = [line for line in outcome.err.splitlines() if line.startswith(PREFIX)]
    return outcome.code, errors


def case_with(**fields):
    report = valid_report()
    report['runs'][0]['testcases'][0].update(fields)
    return report


def figure_of(value):
    report = valid_report()
    report['runs'][0]['testcases'][0]['perfvalues']['local:default:gflops'][0] = value
    return report


def yaml_with(rel, line, *new):
    """The text of reference file *rel* with lines *new* inserted after *line*."""
    lines = valid_text(rel).split('\n')
    return '\n'.join(lines[:line] + list(new) + lines[line:])


#: (id, command, the file it reads, its hostile text); FILE, DIR and OUT in
#: the command stand for the file, the reference directory, an output.
FIXED = [
    ('nan-figure', 'compare FILE', 'r.json', to_json(figure_of(float('nan')))),
    ('deep-json', 'compare FILE', 'r.json', '[' * DEEP + ']' * DEEP),
    (
        'surrogate-name',
        'compare FILE',
        'r.json',
        to_json(case_with(display_name='CGSolverCheck\ud800')),
    ),
    (
        'list-unique-name',
        'report FILE -o OUT',
        'r.json',
        to_json(case_with(unique_name=['CGSolverCheck'])),
    ),
    (
        'duplicate-yaml-key',
        'references check --references DIR',
        'refs/local/hpcc.yaml',
        yaml_with(
            'local/hpcc.yaml', 12, '                hpl: [1.0, -0.5, 0.5, GFlop/s]'
        ),
    ),
]


def _materialised(tmp_path, command, rel, text):
    refs = tmp_path / 'refs'
    shutil.copytree(REFERENCES, refs)
    path = write(tmp_path / rel, text)
    names = {'FILE': path, 'DIR': str(refs), 'OUT': str(tmp_path / 'out.html')}
    return [names.get(word, word) for word in command.split()]


@pytest.mark.parametrize(
    'command, rel, text', [f[1:] for f in FIXED], ids=[f[0] for f in FIXED]
)
def test_the_real_program_does_what_the_harness_saw(tmp_path, command, rel, text):
    argv = _materialised(tmp_path, command, rel, text)
    hostile = Hostile(text, 'fixed', rel, command, definite=True)
    inside = run_cli(argv)
    (tmp_path / 'out.html').unlink(missing_ok=True)
    outside = real(argv)
    assert seen(inside) == seen(outside)
    assert_one_line_or_judged(outside, hostile)


@pytest.mark.parametrize('rel', ['local/netpipe.yaml', 'local/provenance/hpcc.yaml'])
def test_a_billion_laughs_is_one_line(tmp_path, rel):
    """9**9 entries in 1.2 kB (issue 29, item 12): `references check` exits
    non-zero in one line, in bounded memory, before the hang limit; and
    `compare --references` reading the directory neither hangs nor
    tracebacks."""
    refs = tmp_path / 'refs'
    shutil.copytree(REFERENCES, refs)
    write(refs / rel, '\n'.join([valid_text(rel), *laughs(9, 9), '']))
    before = contents(refs)
    hostile = Hostile('', 'aliases', 'a billion laughs', rel, definite=True)
    check = real(['references', 'check', '--references', str(refs)])
    assert_one_line_or_judged(check, hostile, codes=(0, 1))
    report = write(tmp_path / 'r.json', to_json(valid_report()))
    judged = real(['compare', report, '--references', str(refs)])
    assert_one_line_or_judged(judged, dataclasses.replace(hostile, definite=False))
    assert contents(refs) == before


# ------------------------------------- found by the fuzz, fixed in report/


def _curve(report):
    return report['runs'][0]['testcases'][2]['curves']['netpipe']


def _broken(what):
    report = valid_report()
    if what == 'curve-row-text':
        _curve(report)['rows'][1] = 'ab'
    elif what == 'curve-row-huge':
        _curve(report)['rows'][0][1] = 10**400
    elif what == 'curve-meta-list':
        _curve(report)['meta'] = [1]
    elif what == 'start-1e308':
        report['session_info']['time_start_unix'] = 1e308
    elif what == 'completed-nan':
        report['runs'][0]['testcases'][0]['job_completion_time_unix'] = float('nan')
    else:
        report['runs'][0]['testcases'][0]['job_completion_time_unix'] = -1e18
    return report


#: What the page says of each (html-escaped), beside every figure.
SHOWN = {
    'curve-row-text': 'curve netpipe: row 2 is not 3 finite numbers',
    'curve-row-huge': 'curve netpipe: row 1 is not 3 finite numbers',
    'curve-meta-list': 'curve netpipe: &#34;meta&#34; is not an object',
    'start-1e308': '20261126T172129+0000',
    'completed-nan': 'CGSolverCheck',
    'completed-before-year-1': 'CGSolverCheck',
}


@pytest.mark.parametrize('what', list(SHOWN))
def test_13_report_names_a_malformed_curve_and_skips_an_impossible_time(tmp_path, what):
    """Digests that only the report reads (kept curves, session and job
    times) come from a report file, maybe edited: one that is not a curve or
    not a time is named or left out, as `compare` does with a malformed
    digest ("not shown: malformed in the report"), never a traceback
    (OverflowError, IndexError, KeyError, AttributeError before)."""
    path = tmp_path / 'r.json'
    path.write_text(to_json(_broken(what)))
    before = path.read_bytes()
    html = tmp_path / 'out.html'
    done = real(['report', str(path), '-o', str(html)])
    assert not done.escaped and 'Traceback' not in done.text, done.err
    assert done.code == 0, done.err
    assert_line(
        done.out,
        f'wrote {html} (2 configuration(s), 32 figure(s), {{NUM}} plot(s)) and '
        f'the CSVs in {tmp_path}/out-data/ in {{NUM}} s',
    )
    assert SHOWN[what] in html.read_text()
    assert path.read_bytes() == before
