#!/usr/bin/env bash
# Check that every relative link in README.md and docs/*.md names a file or folder that exists
# (the part after `#` is not checked; http(s), mailto and in-page `#…` links are skipped).
# Links inside code blocks and code spans are not links. Exits 1 naming each broken link.
#
#   bash scripts/check-doc-links.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

case "${1:-}" in
-h | --help)
    sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac

python3 - README.md docs/*.md <<'EOF'
import os
import re
import sys

# [text](target) and ![alt](target), with an optional "title"; <target> in angle brackets too.
LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
# [label]: target, a reference definition.
REFERENCE = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$')
FENCE = re.compile(r'^\s*(```|~~~)')

broken = 0
checked = 0
for page in sys.argv[1:]:
    base = os.path.dirname(page)
    in_fence = False
    with open(page, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            text = re.sub(r'`[^`]*`', '', line)  # a code span is not a link
            targets = LINK.findall(text)
            reference = REFERENCE.match(text)
            if reference:
                targets.append(reference.group(1))
            for target in targets:
                if re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', target) or target.startswith('#'):
                    continue
                path = target.split('#', 1)[0].split('?', 1)[0]
                if not path:
                    continue
                checked += 1
                resolved = os.path.normpath(os.path.join(base, path))
                if not os.path.exists(resolved):
                    print(f'{page}:{number}: broken link {target} ({resolved} does not exist)')
                    broken += 1

if broken:
    print(f'{broken} broken link(s) of {checked} checked')
    sys.exit(1)
print(f'doc links: {checked} relative links in {len(sys.argv) - 1} pages, all resolve')
EOF
