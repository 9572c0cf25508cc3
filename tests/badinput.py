"""The pieces of the bad-input matrix (tests/references/test_bad_inputs.py): a store of
references and results whose files are hashed, the one-line messages matched
whole, and the NPB runs the matrix breaks."""

import hashlib
import os
import re
import shutil
import subprocess

from conftest import PROJECT
from rfm import reference_file, tool
from test_npb_check import FAKE_TREE, _closed_port
from test_reftransaction import REFERENCES, contents, run_report
from test_run_session import start

#: Parts of an expected line that vary from run to run.
VARYING = {'{NUM}': r'[\d.]+', '{STAMP}': r'\d{8}T\d{6}', '{ANY}': r'.+'}


def line_pattern(text):
    """The regex of one whole line: *text* literally but for VARYING's parts."""
    pattern = re.escape(text)
    for name, regex in VARYING.items():
        pattern = pattern.replace(re.escape(name), regex)
    return pattern


def unwrapped(output):
    """The lines of *output*, a failure or skip entry that the verdict view
    wrapped to the width (continued with six spaces) made one line again."""
    lines = []
    for line in output.splitlines():
        if line.startswith('      ') and lines and re.match(r'  \S', lines[-1]):
            lines[-1] += ' ' + line.strip()
        else:
            lines.append(line)
    return [line.strip() for line in lines]


def assert_line(output, text):
    pattern = line_pattern(text)
    lines = unwrapped(output)
    near = [line for line in lines if re.search('FAILED|error|Reason', line)]
    assert any(re.fullmatch(pattern, line) for line in lines), (text, near or output)
    assert 'Traceback' not in output


def hashes(*directories):
    """{path: sha256} of every file under *directories*."""
    return {
        os.path.join(str(directory), rel): hashlib.sha256(data).hexdigest()
        for directory in directories
        for rel, (data, _) in contents(directory).items()
    }


class Store:
    """A copy of reference_data/ and a results root holding one earlier session."""

    def __init__(self, tmp_path, refs=None, results=None):
        self.tmp = tmp_path
        self.refs = refs or tmp_path / 'refs'
        if not self.refs.exists():
            shutil.copytree(REFERENCES, self.refs)
        self.results = results or tmp_path / 'results'
        self.earlier = self.results / 'local' / '20260101T000000'
        self.earlier.mkdir(parents=True)
        run_report(self.earlier / 'report.json', files=('cgsolver',), uuid='s-earlier')
        self.before = hashes(self.refs, self.results)
        self.earlier_tree = list(self.results.rglob('*'))

    def file(self, check):
        return reference_file(self.refs, check)

    def assert_kept(self, new_session=False):
        """No stored file changed; a `clusterbench run` may add its session."""
        after = hashes(self.refs, self.results)
        if new_session:
            after = {k: v for k, v in after.items() if k in self.before}
        assert after == self.before

    def run(self, *reframe_args, options=(), checks='reframe_checks/npb.py', env=None):
        """`clusterbench run` on local into this store; (exit code, output)."""
        env = {
            'CLUSTERBENCH_CACHE': str(self.tmp / 'cache'),
            'CLUSTERBENCH_MIRROR': '',
            'CLUSTERBENCH_PERFLOGDIR': str(self.tmp / 'perflogs'),
            **(env or {}),
        }
        proc = start(
            self.tmp, '--checks', checks, '--results', str(self.results),
            '--references', str(self.refs), *options, '--', *reframe_args, env=env,
        )  # fmt: skip
        out, err = proc.communicate(timeout=600)
        return proc.returncode, out + err


def plain_reframe(store, *args):
    """Plain `reframe -r` on the HPCC check against *store*'s references."""
    return subprocess.run(
        [
            tool('reframe'), '-C', 'site_configs/local.py',
            '-c', 'reframe_checks/hpcc.py', '--prefix', str(store.tmp / 'plain'),
            '--nocolor', *args, '-r',
        ],
        capture_output=True, text=True, cwd=PROJECT, timeout=600,
        env={
            **os.environ,
            'RFM_REFERENCE_PREFIX': str(store.refs),
            'RFM_SQLITE_DB_FILE': str(store.tmp / 'results.db'),
        },
    )  # fmt: skip


def references_check(refs):
    return subprocess.run(
        [tool('clusterbench'), 'references', 'check', '--references', str(refs)],
        capture_output=True, text=True, cwd=PROJECT, timeout=300,
    )  # fmt: skip


def npb(*settings, bench='cg', tree=FAKE_TREE):
    """ReFrame options of one tiny NPB run from the fake tree, on gnu-openmpi."""
    return (
        '-S', f'npb_url=http://127.0.0.1:{_closed_port()}/NPB3.4.3.tar.gz',
        '-S', f'npb_source={tree}', '-S', 'npb_class=S', *settings,
        '-n', f'benchmark={bench}$', '-p', 'gnu-openmpi',
    )  # fmt: skip


def failed(phase, reason):
    return f'NPBCheck on local:default with gnu-openmpi: FAILED ({phase}): {reason}'


def programs_under(directory):
    """Pids of the processes running a program under *directory*."""
    found = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            exe = os.readlink(f'/proc/{pid}/exe')
        except OSError:
            continue
        if exe.startswith(f'{directory}/'):
            found.append(int(pid))
    return found


def fake_tree(tmp_path, before_init):
    """A copy of the fake NPB tree whose program does *before_init* first."""
    tree = tmp_path / 'fake_npb'
    shutil.copytree(FAKE_TREE, tree)
    source = tree / 'src' / 'fake_npb.c'
    text = source.read_text()
    text = text.replace(
        '    MPI_Init(&argc, &argv);',
        f'    {before_init}\n    MPI_Init(&argc, &argv);',
        1,
    )
    source.write_text('#include <signal.h>\n#include <unistd.h>\n' + text)
    return tree


#: What `references check` says of each leftover of an interrupted update.
VARYING['{REPAIR}'] = (
    '(?:'
    + '|'.join(
        re.escape(what)
        for what in (
            'committed, not yet applied to every file: repair rolls it forward',
            'a new version not yet renamed into place: repair rolls it forward',
            'an update that did not commit: repair removes it',
        )
    )
    + ')'
)
