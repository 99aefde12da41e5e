# Shared by the stand-ins for the agent CLIs: checks of what cairn gave
# them, and the misbehaviours a test asks for ($STANDIN_MODE, passed
# through agent.env).

fail() { echo "STANDIN: $*" >&2; exit 64; }

# emit prints one event line as it is (sh's echo would read its escapes).
emit() { printf '%s\n' "$1"; }

# has ARG: the argv holds ARG.
has() {
  for a in $ARGV; do [ "$a" = "$1" ] && return 0; done
  return 1
}

# common checks of the environment: a private home inside the job's
# workspace, none of cairn's secrets, the key under its name.
check_env() {
  case "$HOME" in */.cairn/work/job-*/home|*/.cairn/work/ask-*/home) ;; *) fail "HOME is $HOME, not the job's private home" ;; esac
  [ -z "$CAIRN_TEST_SECRET" ] || fail "a variable of cairn's environment leaked: CAIRN_TEST_SECRET"
  case "$PWD" in */.cairn/work/job-*/vault|*/.cairn/work/ask-*/vault) ;; *) fail "the working directory is $PWD, not the job's workspace" ;; esac
  [ -f AGENTS.md ] || [ -f index.md ] || fail "the workspace does not hold the vault's files"
}

# write_page: what every stand-in's agent does in mode ok.
write_page() {
  mkdir -p concepts
  printf -- '---\ntitle: Stand-in\ntype: concept\nsource: raw/standin.md\n---\n\n# Stand-in\n\nWritten by a stand-in for %s.\n' "$1" > concepts/standin.md
  printf -- '\n- [[concepts/standin|Stand-in]] — written by a stand-in\n' >> index.md
}

# misbehave MODE-SPECIFIC-RESULT: the modes every stand-in shares. Returns
# when the mode asks for the normal run.
misbehave() {
  case "$STANDIN_MODE" in
    hang) sleep 1000 ;;
    exit3) echo "the CLI broke" >&2; exit 3 ;;
    garbage) write_page garbage; printf '\033]52;c;ZXZpbA==\007not json at all\n{"type": \n'; exit 0 ;;
    bigline) head -c 10485760 /dev/zero | tr '\0' 'a'; echo ;;
    outside) echo "sneaky" > ../../outside.md 2>/dev/null && echo "STANDIN: wrote outside" >&2 ;;
    asks) printf 'Do you want to continue? [y/N] '; read -r answer; [ "$answer" = y ] || { echo "aborted" >&2; exit 1; } ;;
  esac
}

# answer prints, for a question or a health check in the prompt ($1), the
# JSON reply — the text of the CLI's final message — on standard output,
# and returns 0; for an ingest it returns 1. A question's answer cites
# the pages the workspace holds under concepts/ (a working set's only),
# and one that does not exist.
answer() {
  case "$1" in
    *"<question>"*)
      cites=""
      for f in concepts/*.md; do [ -f "$f" ] && cites="$cites{\\\"page\\\": \\\"$f\\\"}, "; done
      printf '{\\"answer\\": \\"From the stand-in: %s pages.\\", \\"citations\\": [%s{\\"page\\": \\"concepts/made-up.md\\"}]}' "$(ls concepts | wc -l)" "$cites"
      return 0 ;;
    *"knowledge base's health"*)
      printf '{\\"summary\\": \\"Sound, says the stand-in.\\", \\"findings\\": []}'
      return 0 ;;
  esac
  return 1
}
