"""ReFrame's ``httpjson`` perflog handler, bounded in time.

ReFrame 4.10's handler posts each record with no timeout and by default
(``retry_timeout: 0``) retries a 429 Too Many Requests for ever: a site's
time-series store that never answers hangs the session, where no SIGTERM
reaches it. The site config helper (``logging()`` of
site_configs/common.py) makes every ``httpjson`` handler a site adds one of
this type: ReFrame's handler and options, with a finite ``retry_timeout``
and a ``timeout`` (seconds, default 10) on each record's post, its retries
included. A record not sent in time is one warning naming the store and
why (``perflogs: not sent to URL (timed out after 10 s)``), which
`clusterbench run` repeats under its verdicts; the records after it are not
sent, so that the session waits for a store that is down once, not once per
test case.

Loaded into ReFrame by its configuration: registered with ReFrame's
``register_log_handler``, no source of ReFrame changed.
"""

import http
import math
import re
import threading
import urllib.parse

from reframe.core.exceptions import ConfigError, LoggingError
from reframe.core.logging import HTTPJSONHandler, register_log_handler

#: The handler type a site's ``httpjson`` handler becomes.
TYPE = 'clusterbench_httpjson'
#: Seconds a record's post may take, retries included.
TIMEOUT = 10.0
#: Seconds between retries of a 429 (ReFrame's own reach 3.2 s).
BACKOFF = [0.1, 0.2, 0.4, 0.8]


def bounded(handler):
    """*handler* (a perflog handler's configuration): an ``httpjson`` one
    becomes this type, with its ``timeout`` and a finite ``retry_timeout``
    (half the timeout unless the site gives a shorter one); others are
    returned as they are."""
    if not isinstance(handler, dict) or handler.get('type') != 'httpjson':
        return handler
    timeout = handler.get('timeout', TIMEOUT)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ValueError(
            f'httpjson perflog handler: timeout {timeout!r}: not a number of '
            'seconds > 0'
        )
    retry = min(handler.get('retry_timeout') or timeout / 2, timeout)
    register_log_handler(TYPE)(_create)
    return {
        'backoff_intervals': BACKOFF,
        **handler,
        'type': TYPE,
        'timeout': timeout,
        'retry_timeout': retry,
    }


def _create(site_config, prefix):
    def option(name):
        return site_config.get(f'{prefix}/{name}')

    url = option('url')
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in ('http', 'https') or not parsed.hostname:
        raise ConfigError(f'httpjson perflog handler: {url}: not an http(s) URL')
    return BoundedHTTPJSONHandler(
        url,
        option('timeout'),
        extras=option('extras'),
        ignore_keys=option('ignore_keys'),
        json_formatter=option('json_formatter'),
        authorization_header=option('authorization_header'),
        extra_headers=option('extra_headers'),
        debug=bool(option('debug')),
        backoff_intervals=option('backoff_intervals'),
        retry_timeout=option('retry_timeout'),
    )


class BoundedHTTPJSONHandler(HTTPJSONHandler):
    """ReFrame's handler, each post in a thread waited for *timeout* seconds:
    a post stuck on a silent server is left there (a daemon thread, which
    ends with ReFrame)."""

    def __init__(self, url, timeout, **options):
        super().__init__(url, **options)
        self.url, self.timeout = url, timeout
        self.retry_timeout = options['retry_timeout']
        self.missed = ''

    def emit(self, record):
        if self.missed:
            return
        failed = []

        def post():
            try:
                super(BoundedHTTPJSONHandler, self).emit(record)
            except Exception as err:  # noqa: BLE001 - named in the warning
                failed.append(err)

        thread = threading.Thread(target=post, name='perflog post', daemon=True)
        thread.start()
        try:
            thread.join(self.timeout)
        except BaseException:
            # ReFrame stopped by a signal: nothing more is posted.
            self.missed = f'perflogs: not sent to {self.url} (stopped)'
            raise
        if thread.is_alive():
            why = f'timed out after {self.timeout:g} s'
        elif failed:
            why = _why(failed[0], self.retry_timeout)
        else:
            return
        self.missed = f'perflogs: not sent to {self.url} ({why})'
        raise LoggingError(self.missed)


def _why(err, retry_timeout):
    """Why a post failed, in a few words."""
    found = re.search(r'HTTP response code (\d+)', str(err))
    if found:
        code = int(found.group(1))
        try:
            why = f'HTTP {code} {http.HTTPStatus(code).phrase}'
        except ValueError:
            why = f'HTTP {code}'
        if code == http.HTTPStatus.TOO_MANY_REQUESTS:
            why += f' after retrying for {retry_timeout:g} s'
        return why
    cause = err.__cause__ or err
    found = re.search(r'\[Errno -?\d+\] ([^\'")]+)', str(cause))
    if found:
        return f'cannot post: {found.group(1).strip().lower()}'
    return f'cannot post: {" ".join(str(cause).split()) or type(cause).__name__}'
