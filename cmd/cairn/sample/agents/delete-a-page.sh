#!/bin/sh
# A careless agent for cairn demo: cairn runs it in a workspace folder holding
# main's files, the prompt on stdin; its last paragraph of output is its summary.
set -e
prompt=$(cat)
source=$(printf '%s\n' "$prompt" | sed -n 's/^The new source is the file "\(raw\/[^"]*\)".*/\1/p')
cat >summaries/paper-mills.md <<PAGE
---
title: Paper mills
type: summary
source: $source
---
# Paper mills

Mills made paper cheap, so paper needs no page of its own.
PAGE
awk '{ print } /^## Source summaries/ { getline; print
  print "- [[summaries/paper-mills|Paper mills]] — where the paper came from" }' index.md >index.new
mv index.new index.md
rm concepts/paper.md
echo "Summarized $source, listed it in index.md, and deleted concepts/paper.md as out of date."
