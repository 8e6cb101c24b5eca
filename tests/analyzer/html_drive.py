#!/usr/bin/env python3
"""tests/analyzer/html_drive.py — drive headless Chromium over the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages ending in NUL on fds 3 and 4; python3's standard
library only, no port, no network) and check the HTML report as a reader uses it.

    html_drive.py check REPORT.html [--leak-func NAME] [--leak-line FILE:LINE]
        Real mouse clicks and typed text at a 700 px and a 1400 px wide window. Prints
        "ok NAME" / "FAIL NAME (why)" lines and "drive: P passed, F failed"; exit 1 on a
        failure.
    html_drive.py shots REPORT.html OUTDIR
        Screenshots for docs/: the first screen (report-headline.png, 1200x900), the flame
        graph after a metric switch and a search (report-flame.png) and the first screen at
        700 px (report-700.png).

CHROMIUM names the browser (default: chromium). Each run uses a new empty profile.
"""
import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--disable-dev-shm-usage', '--hide-scrollbars', '--remote-debugging-pipe']
TIMEOUT = 120  # seconds for any one answer: the machine may be loaded


class Browser:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix='chromium-profile-')
        r_in, w_in = os.pipe()    # we write, the browser reads on fd 3
        r_out, w_out = os.pipe()  # the browser writes on fd 4, we read
        # Above 4 in the parent, so the child's dup2 onto 3 and 4 never meets itself.
        child_in = fcntl.fcntl(r_in, fcntl.F_DUPFD_CLOEXEC, 10)
        child_out = fcntl.fcntl(w_out, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(r_in)
        os.close(w_out)

        def fds():
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        exe = os.environ.get('CHROMIUM') or shutil.which('chromium') or 'chromium'
        self.proc = subprocess.Popen([exe] + FLAGS + ['--user-data-dir=' + self.profile,
                                                      'about:blank'],
                                     preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(child_in)
        os.close(child_out)
        self.w = w_in
        self.r = r_out
        self.buf = b''
        self.next_id = 0
        self.events = []
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session and self.session:
            msg['sessionId'] = self.session
        os.write(self.w, json.dumps(msg).encode() + b'\0')
        return self.wait(lambda m: m.get('id') == self.next_id, method)

    def wait(self, pred, what):
        deadline = time.time() + TIMEOUT
        while True:
            for i, m in enumerate(self.events):
                if pred(m):
                    del self.events[i]
                    if 'error' in m:
                        raise RuntimeError('%s: %s' % (what, m['error']))
                    return m.get('result', m.get('params'))
            while b'\0' not in self.buf:
                if time.time() > deadline:
                    raise RuntimeError('no answer to %s in %d s' % (what, TIMEOUT))
                chunk = os.read(self.r, 1 << 20)
                if not chunk:
                    raise RuntimeError('the browser closed the pipe (%s)' % what)
                self.buf += chunk
            while b'\0' in self.buf:
                msg, self.buf = self.buf.split(b'\0', 1)
                self.events.append(json.loads(msg))

    def open(self, url, width, height):
        t = self.send('Target.createTarget', {'url': 'about:blank'}, session=False)
        a = self.send('Target.attachToTarget', {'targetId': t['targetId'], 'flatten': True},
                      session=False)
        self.session = a['sessionId']
        self.send('Page.enable')
        self.send('Network.enable')
        self.resize(width, height)
        self.send('Page.navigate', {'url': url})
        self.wait(lambda m: m.get('method') == 'Page.loadEventFired' and
                  m.get('sessionId') == self.session, 'load')

    def resize(self, width, height):
        self.send('Emulation.setDeviceMetricsOverride',
                  {'width': width, 'height': height, 'deviceScaleFactor': 1, 'mobile': False})
        self.js('new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))')

    def js(self, expr):
        r = self.send('Runtime.evaluate', {'expression': expr, 'returnByValue': True,
                                           'awaitPromise': True})
        if r.get('exceptionDetails'):
            raise RuntimeError('script error in %s: %s' % (expr[:60], r['exceptionDetails']))
        return r['result'].get('value')

    def click(self, selector):
        """A real mouse click (pressed, released) at the middle of the element."""
        box = self.js('(function(){var e=document.querySelector(%s);if(!e)return null;'
                      'e.scrollIntoView({block:"center"});var b=e.getBoundingClientRect();'
                      'return [b.left+b.width/2,b.top+b.height/2];})()' % json.dumps(selector))
        if not box:
            raise RuntimeError('nothing matches %s' % selector)
        for kind in ('mouseMoved', 'mousePressed', 'mouseReleased'):
            self.send('Input.dispatchMouseEvent', {'type': kind, 'x': box[0], 'y': box[1],
                                                   'button': 'left', 'clickCount': 1})
        self.js('new Promise(r => requestAnimationFrame(r))')

    def type(self, selector, text):
        self.click(selector)
        self.send('Input.insertText', {'text': text})
        self.js('new Promise(r => requestAnimationFrame(r))')

    def shot(self, path, full=False):
        p = {'format': 'png'}
        if full:
            p['captureBeyondViewport'] = True
        data = self.send('Page.captureScreenshot', p)['data']
        with open(path, 'wb') as f:
            f.write(base64.b64decode(data))

    def requests(self):
        """URLs the page asked for (Network.requestWillBeSent) so far."""
        self.js('1')
        urls = [m['params']['request']['url'] for m in self.events
                if m.get('method') == 'Network.requestWillBeSent']
        return urls

    def close(self):
        try:
            self.send('Browser.close', session=False)
        except RuntimeError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.w)
        os.close(self.r)
        shutil.rmtree(self.profile, ignore_errors=True)


# What a flame graph draws: (name, x, width) of every frame box.
DRAWN = ('(function(n){var s=document.querySelector("svg[data-chart="+n+"]");'
         'return Array.from(s.querySelectorAll("g.hl-datum")).map(function(g){'
         'var r=g.querySelector("rect");return [g.getAttribute("data-name"),'
         '+(+r.getAttribute("x")).toFixed(1),+(+r.getAttribute("width")).toFixed(1)];});})')
FIRST_COL = ('(function(id,c){return Array.from(document.querySelectorAll("#"+id+" tbody tr"))'
             '.map(function(r){var x=r.cells[c];var v=x.getAttribute("data-v");'
             'return v===null?x.textContent:+v;});})')


def check(path, leak_func, leak_line):
    results = []

    def ok(name, cond, why=''):
        results.append(cond)
        print(('ok   ' if cond else 'FAIL ') + name + ('' if cond else ' (%s)' % (why,)))

    b = Browser()
    try:
        b.open('file://' + os.path.abspath(path), 700, 900)
        sw = b.js('[document.scrollingElement.scrollWidth, innerWidth]')
        ok('700px: no sideways scroll (scrollWidth %d <= %d)' % tuple(sw), sw[0] <= sw[1], sw)
        head = b.js('(function(){var h=document.getElementById("headline");'
                    'var b=h.getBoundingClientRect();return [b.top, innerHeight, h.innerText,'
                    'Array.from(h.querySelectorAll("a")).map(a=>a.getAttribute("href"))];})()')
        ok('headline on the first screen', head[0] < head[1] / 3, head[:2])
        for href in ('#leaks', '#memory', '#paths', '#errors'):
            ok('headline links to ' + href, href in head[3], head[3])
        if leak_func:
            ok('headline names the leak site ' + leak_func, leak_func in head[2], head[2][:300])
        if leak_line:
            ok('headline gives the leak\'s file:line ' + leak_line, leak_line in head[2],
               head[2][:300])
        st = b.js('(function(){var e=document.getElementById("hl-status");return [e.hidden,'
                  'e.getClientRects().length,e.textContent,document.body.innerText.indexOf('
                  '"charts=")];})()')
        ok('status line hidden but filled (%s)' % st[2][:40],
           st[0] and st[1] == 0 and st[2].startswith('charts=') and st[3] < 0, st)

        b.click('#head-leaks')
        top = b.js('[location.hash, document.getElementById("leaks").getBoundingClientRect().top]')
        ok('clicking the leak card goes to #leaks', top[0] == '#leaks' and abs(top[1]) < 60, top)

        b.click('#head-temp')
        state = b.js('[location.hash, document.querySelector(".flamebox[data-flame=flame-sites]")'
                     '.getAttribute("data-metric")]')
        ok('the temporaries card opens the flame graph on temporaries',
           state == ['#flame', 'temporaries'], state)
        b.click('.flamebox[data-flame=flame-sites] button[data-m=bytes]')

        # The leak table: function and file:line columns; sorting.
        if leak_func:
            rows = b.js(FIRST_COL + '("leaks-table",0)')
            ok('leak table lists ' + leak_func, leak_func in rows, rows)
        if leak_line:
            lines = b.js(FIRST_COL + '("leaks-table",1)')
            ok('leak table gives ' + leak_line, any(leak_line in x for x in lines), lines)
        before = b.js(FIRST_COL + '("sites-table",3)')
        b.click('#sites-table thead th:nth-child(4)')
        desc = b.js(FIRST_COL + '("sites-table",3)')
        b.click('#sites-table thead th:nth-child(4)')
        asc = b.js(FIRST_COL + '("sites-table",3)')
        ok('sites table sorts by allocations, descending then ascending',
           len(desc) > 1 and desc == sorted(before, reverse=True) and asc == sorted(before),
           (before, desc, asc))
        b.click('#sites-table thead th:nth-child(1)')
        names = b.js(FIRST_COL + '("sites-table",0)')
        ok('sites table sorts by function name',
           names == sorted(names, key=str.lower, reverse=True), names)

        # Flame graph: the metric switch redraws.
        bytes_drawn = b.js(DRAWN + '("flame-sites")')
        ok('flame graph drawn (%d frames)' % len(bytes_drawn), len(bytes_drawn) > 2)
        seen = {'bytes': bytes_drawn}
        for m in ('count', 'temporaries', 'leaked', 'cycles'):
            b.click('.flamebox[data-flame=flame-sites] button[data-m=%s]' % m)
            d = b.js(DRAWN + '("flame-sites")')
            state = b.js('document.querySelector(".flamebox[data-flame=flame-sites]")'
                         '.getAttribute("data-metric")')
            ok('metric %s: switched and drawn differently from bytes' % m,
               state == m and d and d != bytes_drawn, (state, d[:4]))
            seen[m] = d
        b.click('.flamebox[data-flame=flame-sites] button[data-m=bytes]')
        ok('back to bytes: the same drawing', b.js(DRAWN + '("flame-sites")') == bytes_drawn)

        # Zoom: click a frame below the root; it spans the width, its siblings are gone.
        width = b.js('+document.querySelector("svg[data-chart=flame-sites]").getAttribute("width")')
        # The widest frame narrower than the graph (a frame as wide as the graph would zoom
        # to the same drawing); names drawn more than once are ambiguous to click.
        names = [d[0] for d in bytes_drawn]
        pick = sorted((d for d in bytes_drawn[1:] if 3 < d[2] < width * 0.95 and
                       names.count(d[0]) == 1), key=lambda d: -d[2])
        target = pick[0][0] if pick else None
        ok('a frame to zoom into (%s)' % target, target is not None, bytes_drawn[:6])
        if target:
            b.click('svg[data-chart=flame-sites] g[data-name=%s]' % json.dumps(target))
            z = b.js(DRAWN + '("flame-sites")')
            zoom = b.js('document.querySelector("svg[data-chart=flame-sites]").getAttribute('
                        '"data-zoom")')
            boxes = [d for d in z if d[0] == target]
            ok('click zooms into %s: it spans the width' % target,
               zoom == target and boxes and abs(boxes[-1][2] - width) < 1.5 and z != bytes_drawn,
               (zoom, boxes, width))
            b.click('.flamebox[data-flame=flame-sites] .freset')
            ok('reset zoom: the whole graph again', b.js(DRAWN + '("flame-sites")') == bytes_drawn)

        # Search: typed text marks the matching frames.
        word = (leak_func or bytes_drawn[1][0])[:5]
        b.type('.flamebox[data-flame=flame-sites] .fsearch', word)
        m = b.js('Array.from(document.querySelectorAll("svg[data-chart=flame-sites] g.match"))'
                 '.map(g=>g.getAttribute("data-name"))')
        info = b.js('document.querySelector(".flamebox[data-flame=flame-sites] .finfo")'
                    '.textContent')
        ok('search "%s" marks %d frames, all matching' % (word, len(m)),
           m and all(word.lower() in x.lower() for x in m) and 'matches' in info, (m, info))
        b.js('(function(){var s=document.querySelector(".flamebox[data-flame=flame-sites] '
             '.fsearch");s.value="";s.dispatchEvent(new Event("input"));})()')
        ok('search cleared: nothing marked',
           b.js('document.querySelectorAll("svg[data-chart=flame-sites] g.match").length') == 0)

        # Wide window: still no sideways scroll; the flame graph follows the width.
        b.resize(1400, 900)
        sw = b.js('[document.scrollingElement.scrollWidth, innerWidth]')
        ok('1400px: no sideways scroll', sw[0] <= sw[1], sw)
        w2 = b.js('+document.querySelector("svg[data-chart=flame-sites]").getAttribute("width")')
        ok('flame graph redrawn to the wider page (%d -> %d px)' % (width, w2), w2 > width)

        ext = [u for u in b.requests() if not u.startswith(('file:', 'data:', 'about:'))]
        ok('nothing loaded from the network', not ext, ext)
    except RuntimeError as e:  # the page lacks what a step needs, or the browser failed
        ok('the session ran to its end', False, e)
    finally:
        b.close()
    passed = sum(1 for r in results if r)
    print('drive: %d passed, %d failed' % (passed, len(results) - passed))
    return 0 if passed == len(results) else 1


def shots(path, outdir):
    os.makedirs(outdir, exist_ok=True)
    url = 'file://' + os.path.abspath(path)
    b = Browser()
    try:
        b.open(url, 1200, 900)
        b.shot(os.path.join(outdir, 'report-headline.png'))
        b.click('.flamebox[data-flame=flame-sites] button[data-m=count]')
        b.type('.flamebox[data-flame=flame-sites] .fsearch', 'parse')
        b.js('document.querySelector(".flamebox[data-flame=flame-sites]").scrollIntoView()')
        b.shot(os.path.join(outdir, 'report-flame.png'))
        b.resize(700, 1000)
        b.js('scrollTo(0,0)')
        b.shot(os.path.join(outdir, 'report-700.png'))
    finally:
        b.close()
    for n in ('report-headline.png', 'report-flame.png', 'report-700.png'):
        print('wrote', os.path.join(outdir, n))
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == 'check':
        opt = dict(zip(argv[2::2], argv[3::2]))
        return check(argv[1], opt.get('--leak-func'), opt.get('--leak-line'))
    if len(argv) == 3 and argv[0] == 'shots':
        return shots(argv[1], argv[2])
    sys.stderr.write('usage: html_drive.py check REPORT.html [--leak-func NAME] '
                     '[--leak-line FILE:LINE]\n       html_drive.py shots REPORT.html OUTDIR\n')
    return 2


if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv[1:]))
    except RuntimeError as e:
        print('FAIL browser: %s' % e)
        print('drive: 0 passed, 1 failed')
        sys.exit(1)
