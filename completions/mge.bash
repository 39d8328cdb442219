_mge() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="mge"
                ;;
            mge,check)
                cmd="mge__subcmd__check"
                ;;
            mge,compare)
                cmd="mge__subcmd__compare"
                ;;
            mge,completions)
                cmd="mge__subcmd__completions"
                ;;
            mge,dump)
                cmd="mge__subcmd__dump"
                ;;
            mge,help)
                cmd="mge__subcmd__help"
                ;;
            mge,info)
                cmd="mge__subcmd__info"
                ;;
            mge,man)
                cmd="mge__subcmd__man"
                ;;
            mge,pack-testcases)
                cmd="mge__subcmd__pack__subcmd__testcases"
                ;;
            mge,profile)
                cmd="mge__subcmd__profile"
                ;;
            mge,run)
                cmd="mge__subcmd__run"
                ;;
            mge,runtime)
                cmd="mge__subcmd__runtime"
                ;;
            mge,tune)
                cmd="mge__subcmd__tune"
                ;;
            mge__subcmd__help,check)
                cmd="mge__subcmd__help__subcmd__check"
                ;;
            mge__subcmd__help,compare)
                cmd="mge__subcmd__help__subcmd__compare"
                ;;
            mge__subcmd__help,completions)
                cmd="mge__subcmd__help__subcmd__completions"
                ;;
            mge__subcmd__help,dump)
                cmd="mge__subcmd__help__subcmd__dump"
                ;;
            mge__subcmd__help,help)
                cmd="mge__subcmd__help__subcmd__help"
                ;;
            mge__subcmd__help,info)
                cmd="mge__subcmd__help__subcmd__info"
                ;;
            mge__subcmd__help,man)
                cmd="mge__subcmd__help__subcmd__man"
                ;;
            mge__subcmd__help,pack-testcases)
                cmd="mge__subcmd__help__subcmd__pack__subcmd__testcases"
                ;;
            mge__subcmd__help,profile)
                cmd="mge__subcmd__help__subcmd__profile"
                ;;
            mge__subcmd__help,run)
                cmd="mge__subcmd__help__subcmd__run"
                ;;
            mge__subcmd__help,runtime)
                cmd="mge__subcmd__help__subcmd__runtime"
                ;;
            mge__subcmd__help,tune)
                cmd="mge__subcmd__help__subcmd__tune"
                ;;
            mge__subcmd__help__subcmd__runtime,info)
                cmd="mge__subcmd__help__subcmd__runtime__subcmd__info"
                ;;
            mge__subcmd__help__subcmd__runtime,install)
                cmd="mge__subcmd__help__subcmd__runtime__subcmd__install"
                ;;
            mge__subcmd__runtime,help)
                cmd="mge__subcmd__runtime__subcmd__help"
                ;;
            mge__subcmd__runtime,info)
                cmd="mge__subcmd__runtime__subcmd__info"
                ;;
            mge__subcmd__runtime,install)
                cmd="mge__subcmd__runtime__subcmd__install"
                ;;
            mge__subcmd__runtime__subcmd__help,help)
                cmd="mge__subcmd__runtime__subcmd__help__subcmd__help"
                ;;
            mge__subcmd__runtime__subcmd__help,info)
                cmd="mge__subcmd__runtime__subcmd__help__subcmd__info"
                ;;
            mge__subcmd__runtime__subcmd__help,install)
                cmd="mge__subcmd__runtime__subcmd__help__subcmd__install"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        mge)
            opts="-v -q -h -V --lite-lib --runtime-version --verbose --quiet --help --version run info check profile dump compare tune pack-testcases runtime completions man help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__check)
            opts="-j -v -q -h --jobs --json --junit --markdown --shard --device --threads --cpu-inplace --fast-run --reproducible --fast-run-cache --weight-preprocess --fuse-preprocess --const-shape --fake-first --no-sanity-check --record-comp-seq --graph-opt-level --async-level --jit --workspace-limit --layout --layout-transform --tensorrt --options --full-run --fast-run-shared-batch-size --binary-equal-between-batch --tensorrt-cache --cpu-cores --no-algo-cache --model-key --model-decryption --c-opr-lib --maxerr --stat --allow-outliers --topk --check-finite --require-testcases --repro --reduce --worker --timeout --lite-lib --runtime-version --verbose --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --junit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --markdown)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shard)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --record-comp-seq)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --graph-opt-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --async-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workspace-limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --layout)
                    COMPREPLY=($(compgen -W "nchw44 nchw44-dot nchw88 nhwcd4 nchw4 nchw32 nchw64" -- "${cur}"))
                    return 0
                    ;;
                --layout-transform)
                    COMPREPLY=($(compgen -W "auto cpu cuda" -- "${cur}"))
                    return 0
                    ;;
                --options)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-shared-batch-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tensorrt-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cpu-cores)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-decryption)
                    COMPREPLY=($(compgen -W "AES_default RC4_default SIMPLE_FAST_RC4_default" -- "${cur}"))
                    return 0
                    ;;
                --c-opr-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --maxerr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stat)
                    COMPREPLY=($(compgen -W "max mean median" -- "${cur}"))
                    return 0
                    ;;
                --allow-outliers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topk)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repro)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__compare)
            opts="-j -i -v -q -h --maxerr --stat --allow-outliers --topk --atol --rtol --json --junit --markdown --bmf --jobs --shard --structure --input --seed --resize-input --device --threads --cpu-inplace --fast-run --reproducible --fast-run-cache --weight-preprocess --fuse-preprocess --const-shape --fake-first --no-sanity-check --record-comp-seq --graph-opt-level --async-level --jit --workspace-limit --layout --layout-transform --tensorrt --options --full-run --fast-run-shared-batch-size --binary-equal-between-batch --tensorrt-cache --cpu-cores --no-algo-cache --model-key --model-decryption --c-opr-lib --a-options --b-options --b-naive --a-runtime --b-runtime --no-timing --rounds --timing-budget --min-effect --by-op --by-layer --max-slowdown --keep --no-testcase --repro --timeout --lite-lib --runtime-version --verbose --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --maxerr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stat)
                    COMPREPLY=($(compgen -W "max mean median" -- "${cur}"))
                    return 0
                    ;;
                --allow-outliers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topk)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --atol)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rtol)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --junit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --markdown)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bmf)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shard)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --record-comp-seq)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --graph-opt-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --async-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workspace-limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --layout)
                    COMPREPLY=($(compgen -W "nchw44 nchw44-dot nchw88 nhwcd4 nchw4 nchw32 nchw64" -- "${cur}"))
                    return 0
                    ;;
                --layout-transform)
                    COMPREPLY=($(compgen -W "auto cpu cuda" -- "${cur}"))
                    return 0
                    ;;
                --options)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-shared-batch-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tensorrt-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cpu-cores)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-decryption)
                    COMPREPLY=($(compgen -W "AES_default RC4_default SIMPLE_FAST_RC4_default" -- "${cur}"))
                    return 0
                    ;;
                --c-opr-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --a-options)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --b-options)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --a-runtime)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --b-runtime)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rounds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timing-budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-effect)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --by-op)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-slowdown)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keep)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repro)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__completions)
            opts="-v -q -h --lite-lib --runtime-version --verbose --quiet --help bash elvish fish powershell zsh"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__dump)
            opts="-i -v -q -h --input --seed --resize-input --device --threads --cpu-inplace --fast-run --reproducible --fast-run-cache --weight-preprocess --fuse-preprocess --const-shape --fake-first --no-sanity-check --record-comp-seq --graph-opt-level --async-level --jit --workspace-limit --layout --layout-transform --tensorrt --options --full-run --fast-run-shared-batch-size --binary-equal-between-batch --tensorrt-cache --cpu-cores --no-algo-cache --model-key --model-decryption --c-opr-lib --no-testcase --io --io-format --testcases --layout-transform-model --convert --timeout --outputs --check-finite --lite-lib --runtime-version --verbose --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --record-comp-seq)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --graph-opt-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --async-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workspace-limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --layout)
                    COMPREPLY=($(compgen -W "nchw44 nchw44-dot nchw88 nhwcd4 nchw4 nchw32 nchw64" -- "${cur}"))
                    return 0
                    ;;
                --layout-transform)
                    COMPREPLY=($(compgen -W "auto cpu cuda" -- "${cur}"))
                    return 0
                    ;;
                --options)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-shared-batch-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tensorrt-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cpu-cores)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-decryption)
                    COMPREPLY=($(compgen -W "AES_default RC4_default SIMPLE_FAST_RC4_default" -- "${cur}"))
                    return 0
                    ;;
                --c-opr-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --io)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --io-format)
                    COMPREPLY=($(compgen -W "bin txt" -- "${cur}"))
                    return 0
                    ;;
                --testcases)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --layout-transform-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --convert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --outputs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help)
            opts="run info check profile dump compare tune pack-testcases runtime completions man help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__check)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__compare)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__dump)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__info)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__man)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__pack__subcmd__testcases)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__profile)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__run)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__runtime)
            opts="install info"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__runtime__subcmd__info)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__runtime__subcmd__install)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__help__subcmd__tune)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__info)
            opts="-v -q -h --json --model-key --model-decryption --c-opr-lib --ops --lite-lib --runtime-version --verbose --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --model-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-decryption)
                    COMPREPLY=($(compgen -W "AES_default RC4_default SIMPLE_FAST_RC4_default" -- "${cur}"))
                    return 0
                    ;;
                --c-opr-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__man)
            opts="-v -q -h --lite-lib --runtime-version --verbose --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__pack__subcmd__testcases)
            opts="-i -o -v -q -h --input --seed --resize-input --device --threads --cpu-inplace --fast-run --reproducible --fast-run-cache --weight-preprocess --fuse-preprocess --const-shape --fake-first --no-sanity-check --record-comp-seq --graph-opt-level --async-level --jit --workspace-limit --layout --layout-transform --tensorrt --options --full-run --fast-run-shared-batch-size --binary-equal-between-batch --tensorrt-cache --cpu-cores --no-algo-cache --model-key --model-decryption --c-opr-lib --output --maxerr --json --timeout --lite-lib --runtime-version --verbose --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --record-comp-seq)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --graph-opt-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --async-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workspace-limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --layout)
                    COMPREPLY=($(compgen -W "nchw44 nchw44-dot nchw88 nhwcd4 nchw4 nchw32 nchw64" -- "${cur}"))
                    return 0
                    ;;
                --layout-transform)
                    COMPREPLY=($(compgen -W "auto cpu cuda" -- "${cur}"))
                    return 0
                    ;;
                --options)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-shared-batch-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tensorrt-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cpu-cores)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-decryption)
                    COMPREPLY=($(compgen -W "AES_default RC4_default SIMPLE_FAST_RC4_default" -- "${cur}"))
                    return 0
                    ;;
                --c-opr-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --maxerr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__profile)
            opts="-i -o -v -q -h --input --seed --resize-input --device --threads --cpu-inplace --fast-run --reproducible --fast-run-cache --weight-preprocess --fuse-preprocess --const-shape --fake-first --no-sanity-check --record-comp-seq --graph-opt-level --async-level --jit --workspace-limit --layout --layout-transform --tensorrt --options --full-run --fast-run-shared-batch-size --binary-equal-between-batch --tensorrt-cache --cpu-cores --no-algo-cache --model-key --model-decryption --c-opr-lib --warmup --iter --duration --max-duration --all-times --no-testcase --trace --top --by --json --timeout --analyze --type --opr-name --order-by --min-time --aggregate --lite-lib --runtime-version --verbose --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --record-comp-seq)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --graph-opt-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --async-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workspace-limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --layout)
                    COMPREPLY=($(compgen -W "nchw44 nchw44-dot nchw88 nhwcd4 nchw4 nchw32 nchw64" -- "${cur}"))
                    return 0
                    ;;
                --layout-transform)
                    COMPREPLY=($(compgen -W "auto cpu cuda" -- "${cur}"))
                    return 0
                    ;;
                --options)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-shared-batch-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tensorrt-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cpu-cores)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-decryption)
                    COMPREPLY=($(compgen -W "AES_default RC4_default SIMPLE_FAST_RC4_default" -- "${cur}"))
                    return 0
                    ;;
                --c-opr-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --warmup)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --iter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --by)
                    COMPREPLY=($(compgen -W "opr type" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --analyze)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --opr-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --order-by)
                    COMPREPLY=($(compgen -W "time flops name" -- "${cur}"))
                    return 0
                    ;;
                --min-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aggregate)
                    COMPREPLY=($(compgen -W "sum mean max min" -- "${cur}"))
                    return 0
                    ;;
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__run)
            opts="-i -v -q -h --input --seed --resize-input --device --threads --cpu-inplace --fast-run --reproducible --fast-run-cache --weight-preprocess --fuse-preprocess --const-shape --fake-first --no-sanity-check --record-comp-seq --graph-opt-level --async-level --jit --workspace-limit --layout --layout-transform --tensorrt --options --full-run --fast-run-shared-batch-size --binary-equal-between-batch --tensorrt-cache --cpu-cores --no-algo-cache --model-key --model-decryption --c-opr-lib --no-testcase --warmup --iter --duration --max-duration --all-times --outputs --expect --maxerr --stat --allow-outliers --topk --json --profile --bmf --markdown --timeout --extra-output --instances --share-runtime-memory --check-finite --repro --reduce --sweep --lite-lib --runtime-version --verbose --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --record-comp-seq)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --graph-opt-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --async-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workspace-limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --layout)
                    COMPREPLY=($(compgen -W "nchw44 nchw44-dot nchw88 nhwcd4 nchw4 nchw32 nchw64" -- "${cur}"))
                    return 0
                    ;;
                --layout-transform)
                    COMPREPLY=($(compgen -W "auto cpu cuda" -- "${cur}"))
                    return 0
                    ;;
                --options)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-shared-batch-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tensorrt-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cpu-cores)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-decryption)
                    COMPREPLY=($(compgen -W "AES_default RC4_default SIMPLE_FAST_RC4_default" -- "${cur}"))
                    return 0
                    ;;
                --c-opr-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --warmup)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --iter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --outputs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --maxerr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stat)
                    COMPREPLY=($(compgen -W "max mean median" -- "${cur}"))
                    return 0
                    ;;
                --allow-outliers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topk)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bmf)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --markdown)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extra-output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --instances)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repro)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sweep)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__runtime)
            opts="-v -q -h --lite-lib --runtime-version --verbose --quiet --help install info help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__runtime__subcmd__help)
            opts="install info help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__runtime__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__runtime__subcmd__help__subcmd__info)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__runtime__subcmd__help__subcmd__install)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__runtime__subcmd__info)
            opts="-v -q -h --json --probe --lite-lib --runtime-version --verbose --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__runtime__subcmd__install)
            opts="-v -q -h --version --wheel --from-python --find-links --force --lite-lib --runtime-version --verbose --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wheel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --find-links)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        mge__subcmd__tune)
            opts="-i -v -q -h --input --seed --resize-input --device --threads --cpu-inplace --fast-run --reproducible --fast-run-cache --weight-preprocess --fuse-preprocess --const-shape --fake-first --no-sanity-check --record-comp-seq --graph-opt-level --async-level --jit --workspace-limit --layout --layout-transform --tensorrt --options --full-run --fast-run-shared-batch-size --binary-equal-between-batch --tensorrt-cache --cpu-cores --no-algo-cache --model-key --model-decryption --c-opr-lib --budget --search-again --maxerr --stat --allow-outliers --topk --json --save --save-model --lite-lib --runtime-version --verbose --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --input)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --record-comp-seq)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --graph-opt-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --async-level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workspace-limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --layout)
                    COMPREPLY=($(compgen -W "nchw44 nchw44-dot nchw88 nhwcd4 nchw4 nchw32 nchw64" -- "${cur}"))
                    return 0
                    ;;
                --layout-transform)
                    COMPREPLY=($(compgen -W "auto cpu cuda" -- "${cur}"))
                    return 0
                    ;;
                --options)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fast-run-shared-batch-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tensorrt-cache)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cpu-cores)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model-decryption)
                    COMPREPLY=($(compgen -W "AES_default RC4_default SIMPLE_FAST_RC4_default" -- "${cur}"))
                    return 0
                    ;;
                --c-opr-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --maxerr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stat)
                    COMPREPLY=($(compgen -W "max mean median" -- "${cur}"))
                    return 0
                    ;;
                --allow-outliers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topk)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --save)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --save-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lite-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runtime-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _mge -o nosort -o bashdefault -o default mge
else
    complete -F _mge -o bashdefault -o default mge
fi
