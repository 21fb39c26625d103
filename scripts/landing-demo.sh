#!/usr/bin/env bash
# Reproduces the transcript in the README "landing" section (hashes and times differ per run).
# Usage: npm run build && bash scripts/landing-demo.sh   (writes only under /tmp/demo)
set -u
BIN="$(cd "$(dirname "$0")/.." && pwd)/bin/warren.js"
rm -rf /tmp/demo && mkdir -p /tmp/demo && cd /tmp/demo
git init -q --bare origin.git
git init -q -b main shop && cd shop && git config user.email dev@example.com && git config user.name Dev
printf 'protected: [".env.testing", "**/*.local"]\n' > warren.yaml
printf 'services:\n  web:\n    image: node:20\n    volumes:\n      - .:/app\n' > docker-compose.yml
echo 'export const login = () => false;' > login.ts; echo 'DB=base' > settings.local; echo '# shop' > README.md
git add . && git commit -qm "initial" && git remote add origin ../origin.git && git push -q origin main
export WARREN_HOME=/tmp/demo/home
w() { local shown=""; for a in "$@"; do case "$a" in *" "*) shown="$shown \"$a\"";; *) shown="$shown $a";; esac; done; echo "\$ warren$shown"; node "$BIN" "$@" 2>&1; echo "[exit $?]"; }
sh() { echo "\$ $*"; eval "$@"; }
w new feat login
WS=$(node "$BIN" --json show login | node -e 'process.stdin.on("data",d=>console.log(JSON.parse(d).path))')
cd $WS
sh "echo 'export const login = (u: string) => u.length > 0;' > login.ts"
sh "echo 'DB=my-local-db' > settings.local"
sh "echo 'TOKEN=test-secret' > .env.testing"
w checkpoint login -m "login accepts any non-empty user"
sh "echo 'export const logout = () => true;' > logout.ts"
w checkpoint login -m "add logout"
w checkpoint login
cd /tmp/demo/shop
sh "echo '# shop (v2)' > README.md && git commit -qam 'docs: v2 readme'"
w land login
sh "git log --format='%h %s' -3"
sh "git show --stat --format=%B HEAD"
sh "git status --short"
sh "cat $WS/.env.testing $WS/settings.local"
sh "git show main:settings.local; git ls-tree --name-only main"
w new fix cart
CART=$(dirname $WS)/cart
sh "echo 'export const login = (u: string) => u.trim().length > 0;' > $CART/login.ts"
w checkpoint cart -m "trim user names"
sh "printf '#!/bin/sh\\nnpx lint-staged\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"
w --json land cart
w audit cart
w --json land cart --accept-hooks --push
sh "git -C ../origin.git log --format='%h %s' -1 main"
sh "rm .git/hooks/pre-commit"
w new feat search
SEARCH=$(dirname $WS)/search
sh "echo 'export const logout = () => false;' > $SEARCH/logout.ts"
w checkpoint search -m "logout returns false"
sh "echo 'export const logout = () => { return true; };' > logout.ts && git commit -qam 'refactor logout'"
w land search
cd $SEARCH
sh "git merge -q main"
sh "echo 'export const logout = () => false; // kept after review' > logout.ts"
w checkpoint search -m "merge main, keep logout false"
cd /tmp/demo/shop
w land search --branch-only
sh "git -C ../origin.git log --format='%h %s' -1 feat/search; git rev-parse --short main"
w land search
w rm login --delete-branch
w rm cart --delete-branch
w rm search --delete-branch

cd /tmp/demo && git init -q -b main husky && cd husky && git config user.email dev@example.com && git config user.name Dev
sh "printf '.husky/_\\n' > .gitignore && mkdir -p .husky/_ && touch .husky/_/pre-commit && git add .gitignore && git commit -qm init && git config core.hooksPath .husky/_"
w new feat H-1
