#!/usr/bin/env python3
"""check_links.py ROOT - fails (status 1, one line per broken link) when a
relative link of a Markdown file of the project points nowhere: a file or
folder that does not exist, or a #fragment that is no heading of its target
(GitHub's heading anchors: lower case, punctuation dropped, blanks as '-',
"-1", "-2" for repeats).  Links inside code (fenced blocks, `spans`) and
links to other sites are not checked.  Reads README.md and every *.md under
the project but build trees, dependencies and .git."""
import os
import re
import sys

SKIP_DIRS = {'.git', 'node_modules'}
LINK = re.compile(r'!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')


def markdown_files(root):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith('build'))
        for name in sorted(files):
            if name.endswith('.md'):
                yield os.path.join(folder, name)


def prose_lines(text):
    """The lines outside fenced code blocks, with inline code spans blanked: (number, line)."""
    fence = None
    for number, line in enumerate(text.split('\n'), 1):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith('```') or stripped.startswith('~~~'):
            fence = stripped[:3]
            continue
        yield number, re.sub(r'(`+).*?\1', '', line)


def slug(heading):
    text = re.sub(r'<[^>]+>', '', heading)
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


def anchors(path, cache={}):
    if path not in cache:
        found, seen = set(), {}
        with open(path, encoding='utf-8') as f:
            text = f.read()
        for _, line in prose_lines(text.replace('`', '')):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else '%s-%d' % (base, n))
        found.update(re.findall(r'<a\s+(?:id|name)="([^"]+)"', text))
        cache[path] = found
    return cache[path]


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    bad = checked = 0
    for path in markdown_files(root):
        with open(path, encoding='utf-8') as f:
            text = f.read()
        for number, line in prose_lines(text):
            for target in LINK.findall(line):
                if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I):
                    continue        # another site, mail
                checked += 1
                file_part, _, fragment = target.partition('#')
                where = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                rel = os.path.relpath(path, root)
                if not os.path.exists(where):
                    print('%s:%d: %s: no such file' % (rel, number, target))
                    bad += 1
                elif fragment and where.endswith('.md') and fragment not in anchors(where):
                    print('%s:%d: %s: no heading #%s in %s' % (rel, number, target, fragment,
                                                             os.path.relpath(where, root)))
                    bad += 1
    if not bad:
        print('links: %d relative links, every target there' % checked)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
