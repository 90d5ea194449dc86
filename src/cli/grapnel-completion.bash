# bash completion for grapnel. The commands and each command's flags are read
# from the help text (`grapnel --help`, `grapnel COMMAND --help`), so they
# follow the program installed. Installed as
# share/bash-completion/completions/grapnel.
_grapnel()
{
    local cur prev cmd words
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local prog=${COMP_WORDS[0]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        words=$("$prog" --help 2>/dev/null | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p')
        COMPREPLY=($(compgen -W "$words --help --version" -- "$cur"))
        return 0
    fi
    cmd=${COMP_WORDS[1]}
    case "$prev" in
        --backend|--backend-b) COMPREPLY=($(compgen -W "cpu cuda" -- "$cur")); return 0 ;;
        --report) COMPREPLY=($(compgen -W "text json" -- "$cur")); return 0 ;;
        --format|--input-format) COMPREPLY=($(compgen -W "pb pbtxt auto" -- "$cur")); return 0 ;;
        --target) COMPREPLY=($(compgen -W "cpu gpu gpu:sm_90 gpu:sm_90x4 auto" -- "$cur")); return 0 ;;
        --dump-dir|--output-dir) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
    esac
    if [[ "$cur" == -* ]]; then
        words=$("$prog" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
        COMPREPLY=($(compgen -W "$words -o" -- "$cur"))
        return 0
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _grapnel grapnel
