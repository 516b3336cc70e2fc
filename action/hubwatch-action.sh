#!/usr/bin/env bash
# hubwatch's GitHub Action (action.yml), as a script that runs anywhere `hubwatch` and git are installed.
#
# Inputs are environment variables, as action.yml sets them: INPUT_PATH, INPUT_SERVER, INPUT_FAIL_ON,
# INPUT_STRICT, INPUT_FORMAT, INPUT_SARIF_FILE, INPUT_FIX, INPUT_BRANCH, INPUT_TOKEN. GitHub's own
# variables are used when set: GITHUB_WORKSPACE (where to run), GITHUB_OUTPUT (the step's outputs),
# GITHUB_STEP_SUMMARY (hubwatch appends its Markdown report), GITHUB_REPOSITORY, GITHUB_API_URL,
# GITHUB_SERVER_URL and GITHUB_BASE_REF / GITHUB_REF_NAME (where the pull request goes).
#
# 1. `hubwatch check` once, in INPUT_FORMAT (sarif by default, written to INPUT_SARIF_FILE).
# 2. With INPUT_FIX=true and a pin to move: `hubwatch check --fix --branch INPUT_BRANCH --commit`, then,
#    with a token and a repository, push the branch and open a pull request whose body is the Markdown
#    report (each pin moved, what it resolves, the compare link); without them, say what would be done.
# Exit: the first check's code (1 when a pin fails the gate), or the error's (2 usage, 3 server, 4 store).
set -euo pipefail

path=${INPUT_PATH:-.}
format=${INPUT_FORMAT:-sarif}
report=${INPUT_SARIF_FILE:-hubwatch.sarif}
branch=${INPUT_BRANCH:-hubwatch/pin-bump}
token=${INPUT_TOKEN:-}
cd "${GITHUB_WORKSPACE:-.}"

args=(check "$path" --fail-on "${INPUT_FAIL_ON:-high}")
[ -n "${INPUT_SERVER:-}" ] && args+=(--server "$INPUT_SERVER")
[ "${INPUT_STRICT:-false}" = "true" ] && args+=(--strict)

output() {  # a step output, when GitHub reads them
  if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "$1=$2" >>"$GITHUB_OUTPUT"; fi
}

case "$format" in
  table|github) report_args=(--format "$format") ;;
  sarif|junit|markdown|json) report_args=(--format "$format" --output "$report") ;;
  *) echo "hubwatch-action: format must be sarif, github, junit, markdown, json or table, not '$format'" >&2; exit 2 ;;
esac

rc=0
hubwatch "${args[@]}" "${report_args[@]}" || rc=$?
if [ "$rc" -gt 1 ]; then exit "$rc"; fi
output failed "$([ "$rc" -eq 1 ] && echo true || echo false)"
case "$format" in table|github) ;; *) output sarif-file "$report"; echo "hubwatch-action: report written to $report" ;; esac
# The job summary gets the Markdown report whatever the format (`--format github` appends its own).
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ "$format" != "github" ]; then
  hubwatch "${args[@]}" --format markdown >>"$GITHUB_STEP_SUMMARY" || true
fi

if [ "${INPUT_FIX:-false}" != "true" ]; then exit "$rc"; fi

# ---- fix: the pin-bump branch, its commit and the pull request -------------------------------------
base=${GITHUB_BASE_REF:-${GITHUB_REF_NAME:-$(git rev-parse --abbrev-ref HEAD)}}
# A commit needs an author: the Actions bot's, unless git is configured.
if ! git config user.email >/dev/null; then
  export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-github-actions[bot]} GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-github-actions[bot]}
  export GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-41898282+github-actions[bot]@users.noreply.github.com}
  export GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-$GIT_AUTHOR_EMAIL}
fi
body=$(mktemp)
trap 'rm -f "$body"' EXIT
before=$(git rev-parse HEAD)
fix_rc=0
hubwatch "${args[@]}" --fix --branch "$branch" --commit --format markdown --output "$body" || fix_rc=$?
if [ "$fix_rc" -gt 1 ]; then exit "$fix_rc"; fi
if [ "$(git rev-parse HEAD)" = "$before" ]; then
  echo "hubwatch-action: no pin to move; no pull request"
  exit "$rc"
fi
title=$(git log -1 --format=%s)
if [ -z "$token" ] || [ -z "${GITHUB_REPOSITORY:-}" ]; then
  echo "hubwatch-action: no token or GITHUB_REPOSITORY: would push $branch and open a pull request into $base"
  echo "title: $title"
  echo "body:"
  cat "$body"
  exit "$rc"
fi
api=${GITHUB_API_URL:-https://api.github.com}
# actions/checkout leaves its own credentials in the clone (persist-credentials): a second Authorization
# header would be refused, so the token is added only when none is there.
if git config --get-regexp '^http\..*extraheader$' >/dev/null; then
  git push --force --quiet origin "HEAD:refs/heads/$branch"
else
  git -c "http.extraheader=AUTHORIZATION: basic $(printf 'x-access-token:%s' "$token" | base64 | tr -d '\n')" \
    push --force --quiet origin "HEAD:refs/heads/$branch"
fi
payload=$(python3 -c 'import json, sys; print(json.dumps({"title": sys.argv[1], "head": sys.argv[2], "base": sys.argv[3], "body": open(sys.argv[4], encoding="utf-8").read(), "maintainer_can_modify": True}))' \
  "$title" "$branch" "$base" "$body")
answer=$(mktemp)
status=$(curl --silent --show-error --output "$answer" --write-out '%{http_code}' -X POST \
  -H "Authorization: Bearer $token" -H "Accept: application/vnd.github+json" \
  -H "X-GitHub-Api-Version: 2022-11-28" --data "$payload" "$api/repos/$GITHUB_REPOSITORY/pulls") || status=000
if [ "$status" = "201" ]; then
  url=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["html_url"])' "$answer")
  echo "hubwatch-action: opened $url"
  output pull-request "$url"
elif [ "$status" = "422" ]; then
  echo "hubwatch-action: branch $branch pushed; GitHub did not open a pull request (one may be open for it already): $(head -c 300 "$answer")"
else
  echo "hubwatch-action: branch $branch pushed, but opening the pull request answered HTTP $status: $(head -c 300 "$answer")" >&2
  rm -f "$answer"
  exit 1
fi
rm -f "$answer"
exit "$rc"
