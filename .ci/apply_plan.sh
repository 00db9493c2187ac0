#!/usr/bin/env bash
# Apply a nightly plan (repro nightly plan) to GitHub issues: open one per new finding,
# comment when it changed, reopen or close it. Used by nightly.yml for the compile-only
# shards and for the GPU run, each with its own state.
#   RUN=<merged run folder> RUN_URL=<the Actions run> GH_TOKEN=... .ci/apply_plan.sh plan.json
set -eu
plan="${1:?the plan file}"
gh label create repro-nightly --color BFD4F2 --force \
  --description "a finding of the nightly regression run"
if [ "$(jq '[.actions[] | select(.action != "none")] | length' "$plan")" = 0 ]; then
  echo "no change (triton $(jq -r .release "$plan"))" >> "$GITHUB_STEP_SUMMARY"
  exit 0
fi
jq -c '.actions[] | select(.action != "none")' "$plan" | while read -r action; do
  kind=$(jq -r .action <<< "$action")
  finding=$(jq -r .finding <<< "$action")
  title=$(jq -r .title <<< "$action")
  case_id=$(jq -r .case <<< "$action")
  marker="<!-- repro-finding: $finding -->"
  printf '%s\n\n%s\n' "$(jq -r .message <<< "$action")" "Run: $RUN_URL" > comment.md
  number=$(gh issue list --label repro-nightly --state all --limit 1000 \
    --json number,body \
    --jq "map(select(.body | contains(\"$marker\"))) | .[0].number // empty")
  if [ "$kind" = open ] && [ -z "$number" ]; then
    # The body: repro report --format github (its first line is the report's title),
    # repro.py in full, and the marker that finds this issue again.
    repro report "$RUN:$case_id" --format github --output issue-reports \
      | tail -n +2 > body.md
    folder=$(ls -d issue-reports/*/ | head -n 1)
    if [ -f "$folder/repro.py" ]; then
      {
        printf '\n<details><summary>repro.py</summary>\n\n```python\n'
        cat "$folder/repro.py"
        printf '```\n\n</details>\n'
      } >> body.md
    fi
    printf '\n%s\n' "$marker" >> body.md
    gh issue create --title "$title" --label repro-nightly --body-file body.md
    rm -rf issue-reports
  elif [ -n "$number" ]; then
    case "$kind" in
      open|comment) gh issue comment "$number" --body-file comment.md ;;
      reopen) gh issue reopen "$number" --comment "$(cat comment.md)" ;;
      close) gh issue close "$number" --comment "$(cat comment.md)" ;;
    esac
  fi
  echo "- $kind $finding: $(jq -r .message <<< "$action")" >> "$GITHUB_STEP_SUMMARY"
done
