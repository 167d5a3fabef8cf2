#!/usr/bin/env python3
"""results_page.py — the checks of tests/cli/results_page.sh on a results directory's index.html.

  results_page.py static DIR          the page against the result files in DIR: every
                                      comparison, effect, correlator point and sweep case is a
                                      table row, every picture is an <img> of a file there, no
                                      script and nothing from the network; prints a summary
  results_page.py probe DIR           writes DIR/check.html: the page with one script that,
                                      once every image has loaded or failed, writes what the
                                      browser saw into <pre id=ilab-check>
  results_page.py browser DIR DOM     the dumped DOM of check.html against the page: every
                                      image loaded (naturalWidth > 0), every table there
Prints one line per problem and exits 1 when there is any.
"""
import glob
import html.parser
import json
import os
import sys


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.tables, self.scripts, self.urls = [], [], 0, []
        self.check, self._in_check, self._rows = None, False, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'img':
            self.imgs.append(a.get('src', ''))
        if tag == 'table':
            self.tables.append([a.get('class', ''), 0])
        if tag == 'tr' and self.tables:
            self.tables[-1][1] += 1
        if tag == 'script':
            self.scripts += 1
        for k in ('src', 'href'):
            if k in a:
                self.urls.append(a[k])
        if tag == 'pre' and a.get('id') == 'ilab-check':
            self._in_check, self.check = True, ''

    def handle_endtag(self, tag):
        if tag == 'pre':
            self._in_check = False

    def handle_data(self, data):
        if self._in_check:
            self.check += data


def parse(path):
    p = Page()
    with open(path, encoding='utf-8') as f:
        p.feed(f.read())
    return p


def rows(p, cls):
    """data rows (without the header) of every table of class cls"""
    return sum(n - 1 for c, n in p.tables if c == cls)


def expected(d):
    """what the page must show, from the result files in d"""
    want = {'comparisons': 0, 'effects': 0, 'correlator': 0, 'sweep': 0}
    for f in sorted(glob.glob(os.path.join(d, '*.json'))):
        doc = json.load(open(f))
        if doc.get('schema') == 'iommulab-result/1':
            for c in doc['cases']:
                n = len(c['comparisons'])
                want['comparisons'] += n or max(len(c['figures']), 1)
            want['effects'] += len(doc.get('effects', []))
        elif doc.get('schema') == 'iommulab-correlator/1':
            want['correlator'] += len(doc['points'])
        elif doc.get('schema') == 'iommulab-sweep/1' and 'shard' not in doc:
            want['sweep'] += len(doc['cases'])
    return want


def static(d):
    problems = []
    p = parse(os.path.join(d, 'index.html'))
    for cls, n in expected(d).items():
        if rows(p, cls) != n:
            problems.append(f'{cls}: {rows(p, cls)} table rows, the result files have {n}')
    if p.scripts:
        problems.append(f'{p.scripts} <script> elements: the page needs no JavaScript')
    for u in p.urls:
        if '//' in u or u.startswith('/'):
            problems.append(f'{u}: not a file beside the page')
    for src in p.imgs:
        f = os.path.join(d, src)
        if not os.path.isfile(f) or os.path.getsize(f) == 0:
            problems.append(f'<img src="{src}">: no such file')
    print(f'{len(p.imgs)} images, tables: ' +
          ', '.join(f'{c}/{n - 1}' for c, n in p.tables))
    return problems


PROBE = '''<script>
window.addEventListener('load', function () {
  var out = document.createElement('pre');
  out.id = 'ilab-check';
  out.textContent = JSON.stringify({
    images: Array.prototype.map.call(document.images, function (i) {
      return { src: i.getAttribute('src'), complete: i.complete, width: i.naturalWidth };
    }),
    tables: Array.prototype.map.call(document.querySelectorAll('table'), function (t) {
      return [t.className, t.rows.length];
    })
  });
  document.body.appendChild(out);
});
</script>
'''


def probe(d):
    text = open(os.path.join(d, 'index.html'), encoding='utf-8').read()
    if text.count('</body>') != 1:
        return ['index.html: not one </body>']
    with open(os.path.join(d, 'check.html'), 'w', encoding='utf-8') as f:
        f.write(text.replace('</body>', PROBE + '</body>'))
    return []


def browser(d, dom):
    problems = []
    page = parse(os.path.join(d, 'index.html'))
    seen = parse(dom)
    if seen.check is None:
        return ['the browser left no <pre id=ilab-check>: the page did not finish loading']
    got = json.loads(seen.check)
    if len(got['images']) != len(page.imgs):
        problems.append(f'the browser has {len(got["images"])} images, the page {len(page.imgs)}')
    for i in got['images']:
        if not i['complete'] or i['width'] <= 0:
            problems.append(f'{i["src"]}: not loaded in the browser (naturalWidth {i["width"]})')
    if sorted(map(tuple, got['tables'])) != sorted(map(tuple, page.tables)):
        problems.append(f'tables in the browser {got["tables"]}, in the page {page.tables}')
    print(f'browser: {len(got["images"])} images loaded of {len(page.imgs)}, '
          f'{len(got["tables"])} tables')
    return problems


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    problems = {'static': static, 'probe': probe, 'browser': browser}[cmd](*args)
    for p in problems:
        print('PROBLEM: ' + p)
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
