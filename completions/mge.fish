# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_mge_global_optspecs
    string join \n lite-lib= runtime-version= v/verbose q/quiet h/help V/version
end

function __fish_mge_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_mge_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_mge_using_subcommand
    set -l cmd (__fish_mge_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c mge -n "__fish_mge_needs_command" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_needs_command" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_needs_command" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_needs_command" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_needs_command" -s h -l help -d 'Print help'
complete -c mge -n "__fish_mge_needs_command" -s V -l version -d 'Print version'
complete -c mge -n "__fish_mge_needs_command" -f -a "run" -d 'Load a model, feed it, run it and report outputs and timing'
complete -c mge -n "__fish_mge_needs_command" -f -a "info" -d 'Show a model\'s format, inputs, outputs and testcases'
complete -c mge -n "__fish_mge_needs_command" -f -a "check" -d 'Run every testcase embedded in each model and report pass or fail'
complete -c mge -n "__fish_mge_needs_command" -f -a "profile" -d 'Run with the engine\'s profiler: top operators by time and a Chrome trace'
complete -c mge -n "__fish_mge_needs_command" -f -a "dump" -d 'Write tensors out: outputs, every intermediate var, embedded testcases, the layout-transformed model'
complete -c mge -n "__fish_mge_needs_command" -f -a "compare" -d 'Compare tensors (.npy, .npz, folders, io dumps), or two runs of models to the first diverging operator'
complete -c mge -n "__fish_mge_needs_command" -f -a "tune" -d 'Find the fastest engine options that keep the outputs, each tried in its own process'
complete -c mge -n "__fish_mge_needs_command" -f -a "pack-testcases" -d 'Run a model on feeds and write a testcase container: the feeds, and the outputs as expectations its AssertEqual operators check'
complete -c mge -n "__fish_mge_needs_command" -f -a "runtime" -d 'Install or inspect the MegEngine Lite runtime'
complete -c mge -n "__fish_mge_needs_command" -f -a "completions" -d 'Print shell completions'
complete -c mge -n "__fish_mge_needs_command" -f -a "man" -d 'Write manual pages (mge.1 and one per subcommand) into DIR'
complete -c mge -n "__fish_mge_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mge -n "__fish_mge_using_subcommand run" -s i -l input -d 'Input feed: [NAME:]SOURCE with SOURCE one of #rand(MIN,MAX[,SHAPE]), FILE.npy, FILE.npz[:KEY], an image or a JSON literal; several joined by \';\'; @FILE reads one per line' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l seed -d 'Seed for #rand feeds' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l device -d 'Device to run on: cpu, cuda or cuda:ID' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l threads -d 'CPU worker threads' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l fast-run-cache -d 'The fast-run algorithm cache: alone, only read (nothing is profiled; the heuristic picks what it lacks); with --fast-run or --full-run, read and updated with what was profiled' -r -F
complete -c mge -n "__fish_mge_using_subcommand run" -l record-comp-seq -d 'Record the kernel sequence on the first run: 1, or 2 to also free extra memory' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l graph-opt-level -d 'Graph optimization level (0 to 3)' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l async-level -d 'Asynchronous dispatch level' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l jit -d 'JIT level (CUDA only): 1 elemwise, 2 also reductions' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l workspace-limit -d 'Workspace limit for operators with several algorithms' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l layout -d 'Convert the graph to this memory layout' -r -f -a "nchw44\t''
nchw44-dot\t''
nchw88\t''
nhwcd4\t''
nchw4\t''
nchw32\t''
nchw64\t''"
complete -c mge -n "__fish_mge_using_subcommand run" -l layout-transform -d 'Let the engine choose the best layout for the whole graph' -r -f -a "auto\t'The device the model runs on'
cpu\t''
cuda\t''"
complete -c mge -n "__fish_mge_using_subcommand run" -l options -d 'Add the engine options saved by `mge tune --save FILE`' -r -F
complete -c mge -n "__fish_mge_using_subcommand run" -l fast-run-shared-batch-size -d 'Profile with this batch size whatever the model\'s (fast-run\'s shared batch size)' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l tensorrt-cache -d 'Read and update TensorRT\'s engine cache in FILE (with --tensorrt)' -r -F
complete -c mge -n "__fish_mge_using_subcommand run" -l cpu-cores -d 'Pin the engine\'s CPU worker threads to these cores, one core per thread in turn (e.g. 0,1 or 0-3)' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l model-key -d 'The key of an encrypted model, for the methods it names: hex digits, or @FILE holding the raw key' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l model-decryption -d 'The method a bare encrypted model was encrypted with (a packed model names its own)' -r -f -a "AES_default\t''
RC4_default\t''
SIMPLE_FAST_RC4_default\t''"
complete -c mge -n "__fish_mge_using_subcommand run" -l c-opr-lib -d 'Load an extern C operator library (MegEngine\'s extern_c_opr.h) before the model; repeatable' -r -F
complete -c mge -n "__fish_mge_using_subcommand run" -l warmup -d 'Untimed runs before measuring' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l iter -d 'Timed runs (at least this many with --duration, at most as many as fit in --max-duration)' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l duration -d 'Keep running timed runs until they took SECONDS in all (at most 1000000 runs)' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l max-duration -d 'Stop the timed runs once they took SECONDS, even short of --iter' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l outputs -d 'Write each output to DIR/NAME.npy (DIR/INDEX/NAME.npy per embedded testcase)' -r -F
complete -c mge -n "__fish_mge_using_subcommand run" -l expect -d 'Compare output NAME with FILE.npy (a model\'s one output: FILE.npy alone), every output with the array of its name in FILE.npz, or with DIR/NAME.npy as --outputs DIR wrote it (repeatable); checked against the model\'s outputs before any run' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l maxerr -d 'The largest AssertEqual error |a-b| / max(min(|a|,|b|), 1) accepted [default: 1e-4]; NAME:X for tensor NAME only (repeatable)' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l stat -d 'The statistic of a tensor\'s element errors held against --maxerr' -r -f -a "max\t'Every element within the bound (the engine\'s AssertEqual)'
mean\t'The mean element error'
median\t'The median element error'"
complete -c mge -n "__fish_mge_using_subcommand run" -l allow-outliers -d 'The fraction of a tensor\'s elements whose errors may exceed the tolerance (e.g. 0.001)' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l topk -d 'Judge each tensor by its K largest indices along the last axis instead of its values (classifiers)' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l profile -d 'Write a Chrome trace of separate profiled runs, after the timed ones, to FILE' -r -F
complete -c mge -n "__fish_mge_using_subcommand run" -l bmf -d 'Also write the timed runs\' median and its 95% interval to FILE in Bencher Metric Format (`latency`, in nanoseconds)' -r -F
complete -c mge -n "__fish_mge_using_subcommand run" -l markdown -d 'Also write the summary (inputs, outputs, timing) as GitHub-flavoured markdown tables to FILE (`-`: stdout, after the report)' -r -F
complete -c mge -n "__fish_mge_using_subcommand run" -l timeout -d 'Stop the engine\'s work (loading, running) after SECONDS and fail' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l extra-output -d 'Make the internal var VAR an output too, by its name in `mge dump --io`\'s index (repeatable)' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l instances -d 'Run N copies of the network at once, each on a thread and an engine worker of its own, sharing weights' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l repro -d 'For each model that crashed, hung, exited or failed its outputs, write a folder DIR/NAME that reproduces it: the model, its exact feeds, the options, the runtime, the CPU, the engine\'s messages and the command line (a bug report in a folder)' -r -F
complete -c mge -n "__fish_mge_using_subcommand run" -l sweep -d 'Run input NAME at each SHAPE (e.g. data:1x3x224x224,8x3x224x224), each in a process of its own, and report a row per shape; repeated for several inputs, which vary together' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand run" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand run" -l resize-input -d 'Resize images to the input\'s height and width'
complete -c mge -n "__fish_mge_using_subcommand run" -l cpu-inplace -d 'Run CPU kernels on the calling thread'
complete -c mge -n "__fish_mge_using_subcommand run" -l fast-run -d 'Pick each operator\'s algorithm by profiling the optimized ones on the first run (load_and_run\'s fast-run)'
complete -c mge -n "__fish_mge_using_subcommand run" -l reproducible -d 'Use only reproducible algorithms'
complete -c mge -n "__fish_mge_using_subcommand run" -l weight-preprocess -d 'Preprocess constant weights once at load'
complete -c mge -n "__fish_mge_using_subcommand run" -l fuse-preprocess -d 'Fuse preprocessing patterns (astype + pad_channel + dimshuffle)'
complete -c mge -n "__fish_mge_using_subcommand run" -l const-shape -d 'Assume input shapes never change (saves memory)'
complete -c mge -n "__fish_mge_using_subcommand run" -l fake-first -d 'Make the first execution only allocate (an extra untimed run)'
complete -c mge -n "__fish_mge_using_subcommand run" -l no-sanity-check -d 'Skip the var sanity check of the first run'
complete -c mge -n "__fish_mge_using_subcommand run" -l tensorrt -d 'Run through TensorRT (CUDA only)'
complete -c mge -n "__fish_mge_using_subcommand run" -l full-run -d 'Profile every algorithm of each operator, not only the optimized ones (load_and_run\'s full-run)'
complete -c mge -n "__fish_mge_using_subcommand run" -l binary-equal-between-batch -d 'Only pick algorithms whose outputs are binary equal between batches (implies reproducible algorithms)'
complete -c mge -n "__fish_mge_using_subcommand run" -l no-algo-cache -d 'Fast-run neither loads nor keeps the algorithm cache of the cache folder (also MGE_NO_ALGO_CACHE=1): it profiles every time'
complete -c mge -n "__fish_mge_using_subcommand run" -l no-testcase -d 'Run a testcase container with feeds (--input or #rand) instead of its embedded testcases'
complete -c mge -n "__fish_mge_using_subcommand run" -l all-times -d 'With --json, list every timed run\'s time under timing_ms.iterations_ms'
complete -c mge -n "__fish_mge_using_subcommand run" -l json -d 'Print one JSON document on stdout instead of the report'
complete -c mge -n "__fish_mge_using_subcommand run" -l share-runtime-memory -d 'Let the instances share runtime memory; they then take turns, as the engine requires'
complete -c mge -n "__fish_mge_using_subcommand run" -l check-finite -d 'Fail (exit 1) when an output holds NaN or an infinity (said on stderr either way)'
complete -c mge -n "__fish_mge_using_subcommand run" -l reduce -d 'With --repro: also write reduced.mge into each folder, the smallest part of the model found to fail alike (a crash, exit or hang: the shortest prefix of its operators, by bisection; NaN or infinities under --check-finite: up to the first var holding them), which command.sh runs'
complete -c mge -n "__fish_mge_using_subcommand run" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand run" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mge -n "__fish_mge_using_subcommand info" -l model-key -d 'The key of an encrypted model, for the methods it names: hex digits, or @FILE holding the raw key' -r
complete -c mge -n "__fish_mge_using_subcommand info" -l model-decryption -d 'The method a bare encrypted model was encrypted with (a packed model names its own)' -r -f -a "AES_default\t''
RC4_default\t''
SIMPLE_FAST_RC4_default\t''"
complete -c mge -n "__fish_mge_using_subcommand info" -l c-opr-lib -d 'Load an extern C operator library (MegEngine\'s extern_c_opr.h) before the model; repeatable' -r -F
complete -c mge -n "__fish_mge_using_subcommand info" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand info" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand info" -l json -d 'Print one JSON document on stdout'
complete -c mge -n "__fish_mge_using_subcommand info" -l ops -d 'Also list the operators by type with their parameters, MACs and FLOPs, read from the graph'
complete -c mge -n "__fish_mge_using_subcommand info" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand info" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand info" -s h -l help -d 'Print help'
complete -c mge -n "__fish_mge_using_subcommand check" -s j -l jobs -d 'Check N models at a time, each batch in its own worker process' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l junit -d 'Also write a JUnit XML report to FILE' -r -F
complete -c mge -n "__fish_mge_using_subcommand check" -l markdown -d 'Also write the summary as GitHub-flavoured markdown tables to FILE (`-`: stdout); appended to $GITHUB_STEP_SUMMARY where it is set' -r -F
complete -c mge -n "__fish_mge_using_subcommand check" -l shard -d 'Check only slice K of N (from 1): models sorted by path, every Nth; for CI matrices' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l device -d 'Device to run on: cpu, cuda or cuda:ID' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l threads -d 'CPU worker threads' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l fast-run-cache -d 'The fast-run algorithm cache: alone, only read (nothing is profiled; the heuristic picks what it lacks); with --fast-run or --full-run, read and updated with what was profiled' -r -F
complete -c mge -n "__fish_mge_using_subcommand check" -l record-comp-seq -d 'Record the kernel sequence on the first run: 1, or 2 to also free extra memory' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l graph-opt-level -d 'Graph optimization level (0 to 3)' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l async-level -d 'Asynchronous dispatch level' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l jit -d 'JIT level (CUDA only): 1 elemwise, 2 also reductions' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l workspace-limit -d 'Workspace limit for operators with several algorithms' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l layout -d 'Convert the graph to this memory layout' -r -f -a "nchw44\t''
nchw44-dot\t''
nchw88\t''
nhwcd4\t''
nchw4\t''
nchw32\t''
nchw64\t''"
complete -c mge -n "__fish_mge_using_subcommand check" -l layout-transform -d 'Let the engine choose the best layout for the whole graph' -r -f -a "auto\t'The device the model runs on'
cpu\t''
cuda\t''"
complete -c mge -n "__fish_mge_using_subcommand check" -l options -d 'Add the engine options saved by `mge tune --save FILE`' -r -F
complete -c mge -n "__fish_mge_using_subcommand check" -l fast-run-shared-batch-size -d 'Profile with this batch size whatever the model\'s (fast-run\'s shared batch size)' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l tensorrt-cache -d 'Read and update TensorRT\'s engine cache in FILE (with --tensorrt)' -r -F
complete -c mge -n "__fish_mge_using_subcommand check" -l cpu-cores -d 'Pin the engine\'s CPU worker threads to these cores, one core per thread in turn (e.g. 0,1 or 0-3)' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l model-key -d 'The key of an encrypted model, for the methods it names: hex digits, or @FILE holding the raw key' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l model-decryption -d 'The method a bare encrypted model was encrypted with (a packed model names its own)' -r -f -a "AES_default\t''
RC4_default\t''
SIMPLE_FAST_RC4_default\t''"
complete -c mge -n "__fish_mge_using_subcommand check" -l c-opr-lib -d 'Load an extern C operator library (MegEngine\'s extern_c_opr.h) before the model; repeatable' -r -F
complete -c mge -n "__fish_mge_using_subcommand check" -l maxerr -d 'The largest AssertEqual error |a-b| / max(min(|a|,|b|), 1) accepted [default: 1e-4]; NAME:X for tensor NAME only (repeatable)' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l stat -d 'The statistic of a tensor\'s element errors held against --maxerr' -r -f -a "max\t'Every element within the bound (the engine\'s AssertEqual)'
mean\t'The mean element error'
median\t'The median element error'"
complete -c mge -n "__fish_mge_using_subcommand check" -l allow-outliers -d 'The fraction of a tensor\'s elements whose errors may exceed the tolerance (e.g. 0.001)' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l topk -d 'Judge each tensor by its K largest indices along the last axis instead of its values (classifiers)' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l repro -d 'For each model that crashed, hung, exited or failed its outputs, write a folder DIR/NAME that reproduces it: the model, its exact feeds, the options, the runtime, the CPU, the engine\'s messages and the command line (a bug report in a folder)' -r -F
complete -c mge -n "__fish_mge_using_subcommand check" -l timeout -d 'Stop a model\'s check after SECONDS: the model fails and the others go on' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand check" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand check" -l json -d 'Print one JSON document on stdout instead of a line per testcase'
complete -c mge -n "__fish_mge_using_subcommand check" -l cpu-inplace -d 'Run CPU kernels on the calling thread'
complete -c mge -n "__fish_mge_using_subcommand check" -l fast-run -d 'Pick each operator\'s algorithm by profiling the optimized ones on the first run (load_and_run\'s fast-run)'
complete -c mge -n "__fish_mge_using_subcommand check" -l reproducible -d 'Use only reproducible algorithms'
complete -c mge -n "__fish_mge_using_subcommand check" -l weight-preprocess -d 'Preprocess constant weights once at load'
complete -c mge -n "__fish_mge_using_subcommand check" -l fuse-preprocess -d 'Fuse preprocessing patterns (astype + pad_channel + dimshuffle)'
complete -c mge -n "__fish_mge_using_subcommand check" -l const-shape -d 'Assume input shapes never change (saves memory)'
complete -c mge -n "__fish_mge_using_subcommand check" -l fake-first -d 'Make the first execution only allocate (an extra untimed run)'
complete -c mge -n "__fish_mge_using_subcommand check" -l no-sanity-check -d 'Skip the var sanity check of the first run'
complete -c mge -n "__fish_mge_using_subcommand check" -l tensorrt -d 'Run through TensorRT (CUDA only)'
complete -c mge -n "__fish_mge_using_subcommand check" -l full-run -d 'Profile every algorithm of each operator, not only the optimized ones (load_and_run\'s full-run)'
complete -c mge -n "__fish_mge_using_subcommand check" -l binary-equal-between-batch -d 'Only pick algorithms whose outputs are binary equal between batches (implies reproducible algorithms)'
complete -c mge -n "__fish_mge_using_subcommand check" -l no-algo-cache -d 'Fast-run neither loads nor keeps the algorithm cache of the cache folder (also MGE_NO_ALGO_CACHE=1): it profiles every time'
complete -c mge -n "__fish_mge_using_subcommand check" -l check-finite -d 'Fail (exit 1) when an output holds NaN or an infinity (said on stderr either way)'
complete -c mge -n "__fish_mge_using_subcommand check" -l require-testcases -d 'Fail (exit 1) for a plain model, which embeds no testcases, rather than report it as having none'
complete -c mge -n "__fish_mge_using_subcommand check" -l reduce -d 'With --repro: also write reduced.mge into each folder, the smallest part of the model found to fail alike (a crash, exit or hang: the shortest prefix of its operators, by bisection; NaN or infinities under --check-finite: up to the first var holding them), which command.sh runs'
complete -c mge -n "__fish_mge_using_subcommand check" -l worker -d 'Serve as a worker process of `check`: indices into MODELS on stdin, results on stdout'
complete -c mge -n "__fish_mge_using_subcommand check" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand check" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mge -n "__fish_mge_using_subcommand profile" -s i -l input -d 'Input feed: [NAME:]SOURCE with SOURCE one of #rand(MIN,MAX[,SHAPE]), FILE.npy, FILE.npz[:KEY], an image or a JSON literal; several joined by \';\'; @FILE reads one per line' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l seed -d 'Seed for #rand feeds' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l device -d 'Device to run on: cpu, cuda or cuda:ID' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l threads -d 'CPU worker threads' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l fast-run-cache -d 'The fast-run algorithm cache: alone, only read (nothing is profiled; the heuristic picks what it lacks); with --fast-run or --full-run, read and updated with what was profiled' -r -F
complete -c mge -n "__fish_mge_using_subcommand profile" -l record-comp-seq -d 'Record the kernel sequence on the first run: 1, or 2 to also free extra memory' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l graph-opt-level -d 'Graph optimization level (0 to 3)' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l async-level -d 'Asynchronous dispatch level' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l jit -d 'JIT level (CUDA only): 1 elemwise, 2 also reductions' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l workspace-limit -d 'Workspace limit for operators with several algorithms' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l layout -d 'Convert the graph to this memory layout' -r -f -a "nchw44\t''
nchw44-dot\t''
nchw88\t''
nhwcd4\t''
nchw4\t''
nchw32\t''
nchw64\t''"
complete -c mge -n "__fish_mge_using_subcommand profile" -l layout-transform -d 'Let the engine choose the best layout for the whole graph' -r -f -a "auto\t'The device the model runs on'
cpu\t''
cuda\t''"
complete -c mge -n "__fish_mge_using_subcommand profile" -l options -d 'Add the engine options saved by `mge tune --save FILE`' -r -F
complete -c mge -n "__fish_mge_using_subcommand profile" -l fast-run-shared-batch-size -d 'Profile with this batch size whatever the model\'s (fast-run\'s shared batch size)' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l tensorrt-cache -d 'Read and update TensorRT\'s engine cache in FILE (with --tensorrt)' -r -F
complete -c mge -n "__fish_mge_using_subcommand profile" -l cpu-cores -d 'Pin the engine\'s CPU worker threads to these cores, one core per thread in turn (e.g. 0,1 or 0-3)' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l model-key -d 'The key of an encrypted model, for the methods it names: hex digits, or @FILE holding the raw key' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l model-decryption -d 'The method a bare encrypted model was encrypted with (a packed model names its own)' -r -f -a "AES_default\t''
RC4_default\t''
SIMPLE_FAST_RC4_default\t''"
complete -c mge -n "__fish_mge_using_subcommand profile" -l c-opr-lib -d 'Load an extern C operator library (MegEngine\'s extern_c_opr.h) before the model; repeatable' -r -F
complete -c mge -n "__fish_mge_using_subcommand profile" -l warmup -d 'Untimed runs before measuring' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l iter -d 'Timed runs (at least this many with --duration, at most as many as fit in --max-duration)' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l duration -d 'Keep running timed runs until they took SECONDS in all (at most 1000000 runs)' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l max-duration -d 'Stop the timed runs once they took SECONDS, even short of --iter' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -s o -l trace -d 'Write the Chrome trace to FILE [default: <model stem>.trace.json; with --analyze, none]' -r -F
complete -c mge -n "__fish_mge_using_subcommand profile" -l top -d 'Rows to list, largest time first' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l by -d 'One row per operator or per operator type' -r -f -a "opr\t''
type\t''"
complete -c mge -n "__fish_mge_using_subcommand profile" -l timeout -d 'Stop the engine\'s work (loading, running) after SECONDS and fail' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l analyze -d 'Read an engine profile written elsewhere (load_and_run --profile, megenginelite) instead of running a model' -r -F
complete -c mge -n "__fish_mge_using_subcommand profile" -l type -d 'Only operators of type T, e.g. ConvolutionForward (repeatable)' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l opr-name -d 'Only operators whose name matches REGEX from its start (Python\'s re.match)' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l order-by -d 'Sort rows by time or FLOPs (largest first), or by name' -r -f -a "time\t''
flops\t''
name\t''"
complete -c mge -n "__fish_mge_using_subcommand profile" -l min-time -d 'Only operator executions that took at least MS milliseconds' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l aggregate -d 'One row per operator type, its operators combined by FUNC [default: sum]' -r -f -a "sum\t''
mean\t''
max\t''
min\t''"
complete -c mge -n "__fish_mge_using_subcommand profile" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand profile" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand profile" -l resize-input -d 'Resize images to the input\'s height and width'
complete -c mge -n "__fish_mge_using_subcommand profile" -l cpu-inplace -d 'Run CPU kernels on the calling thread'
complete -c mge -n "__fish_mge_using_subcommand profile" -l fast-run -d 'Pick each operator\'s algorithm by profiling the optimized ones on the first run (load_and_run\'s fast-run)'
complete -c mge -n "__fish_mge_using_subcommand profile" -l reproducible -d 'Use only reproducible algorithms'
complete -c mge -n "__fish_mge_using_subcommand profile" -l weight-preprocess -d 'Preprocess constant weights once at load'
complete -c mge -n "__fish_mge_using_subcommand profile" -l fuse-preprocess -d 'Fuse preprocessing patterns (astype + pad_channel + dimshuffle)'
complete -c mge -n "__fish_mge_using_subcommand profile" -l const-shape -d 'Assume input shapes never change (saves memory)'
complete -c mge -n "__fish_mge_using_subcommand profile" -l fake-first -d 'Make the first execution only allocate (an extra untimed run)'
complete -c mge -n "__fish_mge_using_subcommand profile" -l no-sanity-check -d 'Skip the var sanity check of the first run'
complete -c mge -n "__fish_mge_using_subcommand profile" -l tensorrt -d 'Run through TensorRT (CUDA only)'
complete -c mge -n "__fish_mge_using_subcommand profile" -l full-run -d 'Profile every algorithm of each operator, not only the optimized ones (load_and_run\'s full-run)'
complete -c mge -n "__fish_mge_using_subcommand profile" -l binary-equal-between-batch -d 'Only pick algorithms whose outputs are binary equal between batches (implies reproducible algorithms)'
complete -c mge -n "__fish_mge_using_subcommand profile" -l no-algo-cache -d 'Fast-run neither loads nor keeps the algorithm cache of the cache folder (also MGE_NO_ALGO_CACHE=1): it profiles every time'
complete -c mge -n "__fish_mge_using_subcommand profile" -l all-times -d 'With --json, list every timed run\'s time under timing_ms.iterations_ms'
complete -c mge -n "__fish_mge_using_subcommand profile" -l no-testcase -d 'Feed a testcase container #rand instead of its first testcase when there is no --input'
complete -c mge -n "__fish_mge_using_subcommand profile" -l json -d 'Print one JSON document on stdout instead of the table'
complete -c mge -n "__fish_mge_using_subcommand profile" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand profile" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand profile" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mge -n "__fish_mge_using_subcommand dump" -s i -l input -d 'Input feed: [NAME:]SOURCE with SOURCE one of #rand(MIN,MAX[,SHAPE]), FILE.npy, FILE.npz[:KEY], an image or a JSON literal; several joined by \';\'; @FILE reads one per line' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l seed -d 'Seed for #rand feeds' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l device -d 'Device to run on: cpu, cuda or cuda:ID' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l threads -d 'CPU worker threads' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l fast-run-cache -d 'The fast-run algorithm cache: alone, only read (nothing is profiled; the heuristic picks what it lacks); with --fast-run or --full-run, read and updated with what was profiled' -r -F
complete -c mge -n "__fish_mge_using_subcommand dump" -l record-comp-seq -d 'Record the kernel sequence on the first run: 1, or 2 to also free extra memory' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l graph-opt-level -d 'Graph optimization level (0 to 3)' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l async-level -d 'Asynchronous dispatch level' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l jit -d 'JIT level (CUDA only): 1 elemwise, 2 also reductions' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l workspace-limit -d 'Workspace limit for operators with several algorithms' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l layout -d 'Convert the graph to this memory layout' -r -f -a "nchw44\t''
nchw44-dot\t''
nchw88\t''
nhwcd4\t''
nchw4\t''
nchw32\t''
nchw64\t''"
complete -c mge -n "__fish_mge_using_subcommand dump" -l layout-transform -d 'Let the engine choose the best layout for the whole graph' -r -f -a "auto\t'The device the model runs on'
cpu\t''
cuda\t''"
complete -c mge -n "__fish_mge_using_subcommand dump" -l options -d 'Add the engine options saved by `mge tune --save FILE`' -r -F
complete -c mge -n "__fish_mge_using_subcommand dump" -l fast-run-shared-batch-size -d 'Profile with this batch size whatever the model\'s (fast-run\'s shared batch size)' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l tensorrt-cache -d 'Read and update TensorRT\'s engine cache in FILE (with --tensorrt)' -r -F
complete -c mge -n "__fish_mge_using_subcommand dump" -l cpu-cores -d 'Pin the engine\'s CPU worker threads to these cores, one core per thread in turn (e.g. 0,1 or 0-3)' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l model-key -d 'The key of an encrypted model, for the methods it names: hex digits, or @FILE holding the raw key' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l model-decryption -d 'The method a bare encrypted model was encrypted with (a packed model names its own)' -r -f -a "AES_default\t''
RC4_default\t''
SIMPLE_FAST_RC4_default\t''"
complete -c mge -n "__fish_mge_using_subcommand dump" -l c-opr-lib -d 'Load an extern C operator library (MegEngine\'s extern_c_opr.h) before the model; repeatable' -r -F
complete -c mge -n "__fish_mge_using_subcommand dump" -l io -d 'Write every var of one run through the engine\'s io dump, with DIR/index.json' -r -F
complete -c mge -n "__fish_mge_using_subcommand dump" -l io-format -d 'bin: a .npy per var; txt: the engine\'s text dump (DIR/io.txt)' -r -f -a "bin\t''
txt\t''"
complete -c mge -n "__fish_mge_using_subcommand dump" -l testcases -d 'Write each embedded testcase\'s tensors to DIR/INDEX/INPUT.npy (expectations as OUTPUT.expect.npy)' -r -F
complete -c mge -n "__fish_mge_using_subcommand dump" -l layout-transform-model -d 'Write the model after the engine\'s global layout transform to FILE' -r -F
complete -c mge -n "__fish_mge_using_subcommand dump" -l convert -d 'Convert the raw io dump in RAW_DIR (load_and_run --bin-io-dump, megenginelite\'s io_bin_dump) to --io DIR instead of running a model' -r -F
complete -c mge -n "__fish_mge_using_subcommand dump" -l timeout -d 'Stop the engine\'s work (loading, running) after SECONDS and fail' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l outputs -d 'Write each output to DIR/NAME.npy, as `run --outputs` does' -r -F
complete -c mge -n "__fish_mge_using_subcommand dump" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand dump" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand dump" -l resize-input -d 'Resize images to the input\'s height and width'
complete -c mge -n "__fish_mge_using_subcommand dump" -l cpu-inplace -d 'Run CPU kernels on the calling thread'
complete -c mge -n "__fish_mge_using_subcommand dump" -l fast-run -d 'Pick each operator\'s algorithm by profiling the optimized ones on the first run (load_and_run\'s fast-run)'
complete -c mge -n "__fish_mge_using_subcommand dump" -l reproducible -d 'Use only reproducible algorithms'
complete -c mge -n "__fish_mge_using_subcommand dump" -l weight-preprocess -d 'Preprocess constant weights once at load'
complete -c mge -n "__fish_mge_using_subcommand dump" -l fuse-preprocess -d 'Fuse preprocessing patterns (astype + pad_channel + dimshuffle)'
complete -c mge -n "__fish_mge_using_subcommand dump" -l const-shape -d 'Assume input shapes never change (saves memory)'
complete -c mge -n "__fish_mge_using_subcommand dump" -l fake-first -d 'Make the first execution only allocate (an extra untimed run)'
complete -c mge -n "__fish_mge_using_subcommand dump" -l no-sanity-check -d 'Skip the var sanity check of the first run'
complete -c mge -n "__fish_mge_using_subcommand dump" -l tensorrt -d 'Run through TensorRT (CUDA only)'
complete -c mge -n "__fish_mge_using_subcommand dump" -l full-run -d 'Profile every algorithm of each operator, not only the optimized ones (load_and_run\'s full-run)'
complete -c mge -n "__fish_mge_using_subcommand dump" -l binary-equal-between-batch -d 'Only pick algorithms whose outputs are binary equal between batches (implies reproducible algorithms)'
complete -c mge -n "__fish_mge_using_subcommand dump" -l no-algo-cache -d 'Fast-run neither loads nor keeps the algorithm cache of the cache folder (also MGE_NO_ALGO_CACHE=1): it profiles every time'
complete -c mge -n "__fish_mge_using_subcommand dump" -l no-testcase -d 'Feed a testcase container #rand instead of its first testcase when there is no --input'
complete -c mge -n "__fish_mge_using_subcommand dump" -l check-finite -d 'Fail (exit 1) when an output, or with --io any var, holds NaN or an infinity (said on stderr either way)'
complete -c mge -n "__fish_mge_using_subcommand dump" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand dump" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand dump" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mge -n "__fish_mge_using_subcommand compare" -l maxerr -d 'The largest AssertEqual error |a-b| / max(min(|a|,|b|), 1) accepted [default: 1e-4]; NAME:X for tensor NAME only (repeatable)' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l stat -d 'The statistic of a tensor\'s element errors held against --maxerr' -r -f -a "max\t'Every element within the bound (the engine\'s AssertEqual)'
mean\t'The mean element error'
median\t'The median element error'"
complete -c mge -n "__fish_mge_using_subcommand compare" -l allow-outliers -d 'The fraction of a tensor\'s elements whose errors may exceed the tolerance (e.g. 0.001)' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l topk -d 'Judge each tensor by its K largest indices along the last axis instead of its values (classifiers)' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l atol -d 'Accept |a-b| <= ATOL + RTOL*|b| instead of the AssertEqual error (NumPy\'s allclose)' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l rtol -d 'See --atol' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l junit -d 'Also write a JUnit XML report to FILE (models): outputs that differ and a slowdown beyond --max-slowdown are failures' -r -F
complete -c mge -n "__fish_mge_using_subcommand compare" -l markdown -d 'Also write the summary as GitHub-flavoured markdown tables to FILE (`-`: stdout), models: appended to $GITHUB_STEP_SUMMARY where it is set' -r -F
complete -c mge -n "__fish_mge_using_subcommand compare" -l bmf -d 'Also write B\'s median over the rounds and its 95% interval to FILE in Bencher Metric Format (`latency`, in nanoseconds; models, timed)' -r -F
complete -c mge -n "__fish_mge_using_subcommand compare" -s j -l jobs -d 'Run the outputs of N pairs of models at a time (folders of models); timing runs one pair at a time' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l shard -d 'Compare only slice K of N (from 1) of two folders of models: paths sorted, every Nth; for CI matrices' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -s i -l input -d 'Input feed: [NAME:]SOURCE with SOURCE one of #rand(MIN,MAX[,SHAPE]), FILE.npy, FILE.npz[:KEY], an image or a JSON literal; several joined by \';\'; @FILE reads one per line' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l seed -d 'Seed for #rand feeds' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l device -d 'Device to run on: cpu, cuda or cuda:ID' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l threads -d 'CPU worker threads' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l fast-run-cache -d 'The fast-run algorithm cache: alone, only read (nothing is profiled; the heuristic picks what it lacks); with --fast-run or --full-run, read and updated with what was profiled' -r -F
complete -c mge -n "__fish_mge_using_subcommand compare" -l record-comp-seq -d 'Record the kernel sequence on the first run: 1, or 2 to also free extra memory' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l graph-opt-level -d 'Graph optimization level (0 to 3)' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l async-level -d 'Asynchronous dispatch level' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l jit -d 'JIT level (CUDA only): 1 elemwise, 2 also reductions' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l workspace-limit -d 'Workspace limit for operators with several algorithms' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l layout -d 'Convert the graph to this memory layout' -r -f -a "nchw44\t''
nchw44-dot\t''
nchw88\t''
nhwcd4\t''
nchw4\t''
nchw32\t''
nchw64\t''"
complete -c mge -n "__fish_mge_using_subcommand compare" -l layout-transform -d 'Let the engine choose the best layout for the whole graph' -r -f -a "auto\t'The device the model runs on'
cpu\t''
cuda\t''"
complete -c mge -n "__fish_mge_using_subcommand compare" -l options -d 'Add the engine options saved by `mge tune --save FILE`' -r -F
complete -c mge -n "__fish_mge_using_subcommand compare" -l fast-run-shared-batch-size -d 'Profile with this batch size whatever the model\'s (fast-run\'s shared batch size)' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l tensorrt-cache -d 'Read and update TensorRT\'s engine cache in FILE (with --tensorrt)' -r -F
complete -c mge -n "__fish_mge_using_subcommand compare" -l cpu-cores -d 'Pin the engine\'s CPU worker threads to these cores, one core per thread in turn (e.g. 0,1 or 0-3)' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l model-key -d 'The key of an encrypted model, for the methods it names: hex digits, or @FILE holding the raw key' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l model-decryption -d 'The method a bare encrypted model was encrypted with (a packed model names its own)' -r -f -a "AES_default\t''
RC4_default\t''
SIMPLE_FAST_RC4_default\t''"
complete -c mge -n "__fish_mge_using_subcommand compare" -l c-opr-lib -d 'Load an extern C operator library (MegEngine\'s extern_c_opr.h) before the model; repeatable' -r -F
complete -c mge -n "__fish_mge_using_subcommand compare" -l a-options -d 'Engine options of run A only, as `mge run` takes them, e.g. \'--threads 1\'' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l b-options -d 'Engine options of run B only, e.g. \'--layout nchw44\' or \'--fast-run\'' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l a-runtime -d 'Run A on the runtime of MegEngine VERSION installed in the cache folder' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l b-runtime -d 'Run B on the runtime of MegEngine VERSION installed in the cache folder' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l rounds -d 'Time A and B in exactly N rounds, each side in a fresh process per round (A B, B A, ...); without it, rounds are added until the verdict is decided or --timing-budget is spent' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l timing-budget -d 'The most seconds the rounds of a pair may take, when --rounds does not fix them [default: 60]' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l min-effect -d 'The smallest difference in speed that counts: B/A\'s 95% interval within ±PCT% is `same`, wholly beyond it `faster` or `slower`, else `undecided`; the pair\'s verdict and each operator\'s of --by-op [default: 2]' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l by-op -d 'Where the time went: profile both sides in rounds of their own and list the N operators whose time changed most, and those on one side only' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l max-slowdown -d 'Fail (exit 1) when B is `slower` than A by more than PCT percent, with the whole 95% interval of B/A above it' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l keep -d 'Keep both runs\' io dumps and outputs in DIR/a and DIR/b (a new or empty folder)' -r -F
complete -c mge -n "__fish_mge_using_subcommand compare" -l repro -d 'For each model that crashed, hung, exited or failed its outputs, write a folder DIR/NAME that reproduces it: the model, its exact feeds, the options, the runtime, the CPU, the engine\'s messages and the command line (a bug report in a folder)' -r -F
complete -c mge -n "__fish_mge_using_subcommand compare" -l timeout -d 'Stop a run of A or B (each run, and each timed process) after SECONDS and fail' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand compare" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand compare" -l json -d 'Print one JSON document on stdout instead of the table'
complete -c mge -n "__fish_mge_using_subcommand compare" -l structure -d 'Compare the two models\' graphs from their files alone (operators, parameters, MACs, inputs, outputs); no engine runs; exit 1 when they differ'
complete -c mge -n "__fish_mge_using_subcommand compare" -l resize-input -d 'Resize images to the input\'s height and width'
complete -c mge -n "__fish_mge_using_subcommand compare" -l cpu-inplace -d 'Run CPU kernels on the calling thread'
complete -c mge -n "__fish_mge_using_subcommand compare" -l fast-run -d 'Pick each operator\'s algorithm by profiling the optimized ones on the first run (load_and_run\'s fast-run)'
complete -c mge -n "__fish_mge_using_subcommand compare" -l reproducible -d 'Use only reproducible algorithms'
complete -c mge -n "__fish_mge_using_subcommand compare" -l weight-preprocess -d 'Preprocess constant weights once at load'
complete -c mge -n "__fish_mge_using_subcommand compare" -l fuse-preprocess -d 'Fuse preprocessing patterns (astype + pad_channel + dimshuffle)'
complete -c mge -n "__fish_mge_using_subcommand compare" -l const-shape -d 'Assume input shapes never change (saves memory)'
complete -c mge -n "__fish_mge_using_subcommand compare" -l fake-first -d 'Make the first execution only allocate (an extra untimed run)'
complete -c mge -n "__fish_mge_using_subcommand compare" -l no-sanity-check -d 'Skip the var sanity check of the first run'
complete -c mge -n "__fish_mge_using_subcommand compare" -l tensorrt -d 'Run through TensorRT (CUDA only)'
complete -c mge -n "__fish_mge_using_subcommand compare" -l full-run -d 'Profile every algorithm of each operator, not only the optimized ones (load_and_run\'s full-run)'
complete -c mge -n "__fish_mge_using_subcommand compare" -l binary-equal-between-batch -d 'Only pick algorithms whose outputs are binary equal between batches (implies reproducible algorithms)'
complete -c mge -n "__fish_mge_using_subcommand compare" -l no-algo-cache -d 'Fast-run neither loads nor keeps the algorithm cache of the cache folder (also MGE_NO_ALGO_CACHE=1): it profiles every time'
complete -c mge -n "__fish_mge_using_subcommand compare" -l b-naive -d 'Run B on megdnn\'s naive reference kernels (CPU; not timed)'
complete -c mge -n "__fish_mge_using_subcommand compare" -l no-timing -d 'Do not time the two runs: compare their outputs only'
complete -c mge -n "__fish_mge_using_subcommand compare" -l by-layer -d 'Pair the vars of two graphs of one network by topology (float against int8, fp32 against fp16, before and after a graph change) and give each pair\'s SQNR, cosine similarity and largest difference, naming the layer where the SQNR falls most'
complete -c mge -n "__fish_mge_using_subcommand compare" -l no-testcase -d 'Feed a testcase container #rand instead of its first testcase when there is no --input'
complete -c mge -n "__fish_mge_using_subcommand compare" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand compare" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand compare" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mge -n "__fish_mge_using_subcommand tune" -s i -l input -d 'Input feed: [NAME:]SOURCE with SOURCE one of #rand(MIN,MAX[,SHAPE]), FILE.npy, FILE.npz[:KEY], an image or a JSON literal; several joined by \';\'; @FILE reads one per line' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l seed -d 'Seed for #rand feeds' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l device -d 'Device to run on: cpu, cuda or cuda:ID' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l threads -d 'CPU worker threads' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l fast-run-cache -d 'The fast-run algorithm cache: alone, only read (nothing is profiled; the heuristic picks what it lacks); with --fast-run or --full-run, read and updated with what was profiled' -r -F
complete -c mge -n "__fish_mge_using_subcommand tune" -l record-comp-seq -d 'Record the kernel sequence on the first run: 1, or 2 to also free extra memory' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l graph-opt-level -d 'Graph optimization level (0 to 3)' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l async-level -d 'Asynchronous dispatch level' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l jit -d 'JIT level (CUDA only): 1 elemwise, 2 also reductions' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l workspace-limit -d 'Workspace limit for operators with several algorithms' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l layout -d 'Convert the graph to this memory layout' -r -f -a "nchw44\t''
nchw44-dot\t''
nchw88\t''
nhwcd4\t''
nchw4\t''
nchw32\t''
nchw64\t''"
complete -c mge -n "__fish_mge_using_subcommand tune" -l layout-transform -d 'Let the engine choose the best layout for the whole graph' -r -f -a "auto\t'The device the model runs on'
cpu\t''
cuda\t''"
complete -c mge -n "__fish_mge_using_subcommand tune" -l options -d 'Add the engine options saved by `mge tune --save FILE`' -r -F
complete -c mge -n "__fish_mge_using_subcommand tune" -l fast-run-shared-batch-size -d 'Profile with this batch size whatever the model\'s (fast-run\'s shared batch size)' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l tensorrt-cache -d 'Read and update TensorRT\'s engine cache in FILE (with --tensorrt)' -r -F
complete -c mge -n "__fish_mge_using_subcommand tune" -l cpu-cores -d 'Pin the engine\'s CPU worker threads to these cores, one core per thread in turn (e.g. 0,1 or 0-3)' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l model-key -d 'The key of an encrypted model, for the methods it names: hex digits, or @FILE holding the raw key' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l model-decryption -d 'The method a bare encrypted model was encrypted with (a packed model names its own)' -r -f -a "AES_default\t''
RC4_default\t''
SIMPLE_FAST_RC4_default\t''"
complete -c mge -n "__fish_mge_using_subcommand tune" -l c-opr-lib -d 'Load an extern C operator library (MegEngine\'s extern_c_opr.h) before the model; repeatable' -r -F
complete -c mge -n "__fish_mge_using_subcommand tune" -l budget -d 'Seconds to spend on the search' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l maxerr -d 'The largest AssertEqual error |a-b| / max(min(|a|,|b|), 1) accepted [default: 1e-4]; NAME:X for tensor NAME only (repeatable)' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l stat -d 'The statistic of a tensor\'s element errors held against --maxerr' -r -f -a "max\t'Every element within the bound (the engine\'s AssertEqual)'
mean\t'The mean element error'
median\t'The median element error'"
complete -c mge -n "__fish_mge_using_subcommand tune" -l allow-outliers -d 'The fraction of a tensor\'s elements whose errors may exceed the tolerance (e.g. 0.001)' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l topk -d 'Judge each tensor by its K largest indices along the last axis instead of its values (classifiers)' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l save -d 'Save the best options to FILE (and its fast-run cache beside it) for `--options FILE`' -r -F
complete -c mge -n "__fish_mge_using_subcommand tune" -l save-model -d 'Write a Lite packed model to OUT.mge: the model with the best options and the fast-run cache it used, for `mge run OUT.mge` and MegEngine Lite' -r -F
complete -c mge -n "__fish_mge_using_subcommand tune" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand tune" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand tune" -l resize-input -d 'Resize images to the input\'s height and width'
complete -c mge -n "__fish_mge_using_subcommand tune" -l cpu-inplace -d 'Run CPU kernels on the calling thread'
complete -c mge -n "__fish_mge_using_subcommand tune" -l fast-run -d 'Pick each operator\'s algorithm by profiling the optimized ones on the first run (load_and_run\'s fast-run)'
complete -c mge -n "__fish_mge_using_subcommand tune" -l reproducible -d 'Use only reproducible algorithms'
complete -c mge -n "__fish_mge_using_subcommand tune" -l weight-preprocess -d 'Preprocess constant weights once at load'
complete -c mge -n "__fish_mge_using_subcommand tune" -l fuse-preprocess -d 'Fuse preprocessing patterns (astype + pad_channel + dimshuffle)'
complete -c mge -n "__fish_mge_using_subcommand tune" -l const-shape -d 'Assume input shapes never change (saves memory)'
complete -c mge -n "__fish_mge_using_subcommand tune" -l fake-first -d 'Make the first execution only allocate (an extra untimed run)'
complete -c mge -n "__fish_mge_using_subcommand tune" -l no-sanity-check -d 'Skip the var sanity check of the first run'
complete -c mge -n "__fish_mge_using_subcommand tune" -l tensorrt -d 'Run through TensorRT (CUDA only)'
complete -c mge -n "__fish_mge_using_subcommand tune" -l full-run -d 'Profile every algorithm of each operator, not only the optimized ones (load_and_run\'s full-run)'
complete -c mge -n "__fish_mge_using_subcommand tune" -l binary-equal-between-batch -d 'Only pick algorithms whose outputs are binary equal between batches (implies reproducible algorithms)'
complete -c mge -n "__fish_mge_using_subcommand tune" -l no-algo-cache -d 'Fast-run neither loads nor keeps the algorithm cache of the cache folder (also MGE_NO_ALGO_CACHE=1): it profiles every time'
complete -c mge -n "__fish_mge_using_subcommand tune" -l search-again -d 'Measure every candidate anew, not the record of the last search of this model with these settings'
complete -c mge -n "__fish_mge_using_subcommand tune" -l json -d 'Print one JSON document on stdout instead of the table'
complete -c mge -n "__fish_mge_using_subcommand tune" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand tune" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand tune" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -s i -l input -d 'Input feed: [NAME:]SOURCE with SOURCE one of #rand(MIN,MAX[,SHAPE]), FILE.npy, FILE.npz[:KEY], an image or a JSON literal; several joined by \';\'; @FILE reads one per line' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l seed -d 'Seed for #rand feeds' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l device -d 'Device to run on: cpu, cuda or cuda:ID' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l threads -d 'CPU worker threads' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l fast-run-cache -d 'The fast-run algorithm cache: alone, only read (nothing is profiled; the heuristic picks what it lacks); with --fast-run or --full-run, read and updated with what was profiled' -r -F
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l record-comp-seq -d 'Record the kernel sequence on the first run: 1, or 2 to also free extra memory' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l graph-opt-level -d 'Graph optimization level (0 to 3)' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l async-level -d 'Asynchronous dispatch level' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l jit -d 'JIT level (CUDA only): 1 elemwise, 2 also reductions' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l workspace-limit -d 'Workspace limit for operators with several algorithms' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l layout -d 'Convert the graph to this memory layout' -r -f -a "nchw44\t''
nchw44-dot\t''
nchw88\t''
nhwcd4\t''
nchw4\t''
nchw32\t''
nchw64\t''"
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l layout-transform -d 'Let the engine choose the best layout for the whole graph' -r -f -a "auto\t'The device the model runs on'
cpu\t''
cuda\t''"
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l options -d 'Add the engine options saved by `mge tune --save FILE`' -r -F
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l fast-run-shared-batch-size -d 'Profile with this batch size whatever the model\'s (fast-run\'s shared batch size)' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l tensorrt-cache -d 'Read and update TensorRT\'s engine cache in FILE (with --tensorrt)' -r -F
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l cpu-cores -d 'Pin the engine\'s CPU worker threads to these cores, one core per thread in turn (e.g. 0,1 or 0-3)' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l model-key -d 'The key of an encrypted model, for the methods it names: hex digits, or @FILE holding the raw key' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l model-decryption -d 'The method a bare encrypted model was encrypted with (a packed model names its own)' -r -f -a "AES_default\t''
RC4_default\t''
SIMPLE_FAST_RC4_default\t''"
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l c-opr-lib -d 'Load an extern C operator library (MegEngine\'s extern_c_opr.h) before the model; repeatable' -r -F
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -s o -l output -d 'The testcase container to write (.mge)' -r -F
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l maxerr -d 'The largest AssertEqual error the container\'s assertions accept' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l timeout -d 'Stop the engine\'s work (loading, running) after SECONDS and fail' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l resize-input -d 'Resize images to the input\'s height and width'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l cpu-inplace -d 'Run CPU kernels on the calling thread'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l fast-run -d 'Pick each operator\'s algorithm by profiling the optimized ones on the first run (load_and_run\'s fast-run)'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l reproducible -d 'Use only reproducible algorithms'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l weight-preprocess -d 'Preprocess constant weights once at load'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l fuse-preprocess -d 'Fuse preprocessing patterns (astype + pad_channel + dimshuffle)'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l const-shape -d 'Assume input shapes never change (saves memory)'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l fake-first -d 'Make the first execution only allocate (an extra untimed run)'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l no-sanity-check -d 'Skip the var sanity check of the first run'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l tensorrt -d 'Run through TensorRT (CUDA only)'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l full-run -d 'Profile every algorithm of each operator, not only the optimized ones (load_and_run\'s full-run)'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l binary-equal-between-batch -d 'Only pick algorithms whose outputs are binary equal between batches (implies reproducible algorithms)'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l no-algo-cache -d 'Fast-run neither loads nor keeps the algorithm cache of the cache folder (also MGE_NO_ALGO_CACHE=1): it profiles every time'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -l json -d 'Print one JSON document on stdout instead of the summary'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand pack-testcases" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mge -n "__fish_mge_using_subcommand runtime; and not __fish_seen_subcommand_from install info help" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand runtime; and not __fish_seen_subcommand_from install info help" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand runtime; and not __fish_seen_subcommand_from install info help" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand runtime; and not __fish_seen_subcommand_from install info help" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand runtime; and not __fish_seen_subcommand_from install info help" -s h -l help -d 'Print help'
complete -c mge -n "__fish_mge_using_subcommand runtime; and not __fish_seen_subcommand_from install info help" -f -a "install" -d 'Keep MegEngine\'s runtime libraries in the cache folder, beside other versions: copied from the active virtualenv\'s or python3\'s MegEngine where one has the version, else downloaded with pip (or from a wheel you have)'
complete -c mge -n "__fish_mge_using_subcommand runtime; and not __fish_seen_subcommand_from install info help" -f -a "info" -d 'Show which runtime is used (path, version, devices, CUDA architectures, GPUs) and which are installed'
complete -c mge -n "__fish_mge_using_subcommand runtime; and not __fish_seen_subcommand_from install info help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from install" -l version -d 'MegEngine version, a release or a build of it (1.13.2+cu118) [default: --runtime-version\'s, else 1.13.0; for --wheel, the wheel\'s]' -r
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from install" -l wheel -d 'Install from this wheel (MegEngine-*.whl), downloaded by other means' -r -F
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from install" -l from-python -d 'Copy the runtime of the MegEngine this Python has installed (its megenginelite/libs and megengine/core/lib), without downloading' -r -F
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from install" -l find-links -d 'Let pip look for the wheel on this page or in this folder too, such as MegEngine\'s own index of CUDA builds' -r
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from install" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from install" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from install" -l force -d 'Reinstall even when present'
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from install" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from install" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help'
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from info" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from info" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from info" -l json -d 'Print one JSON document on stdout'
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from info" -l probe -d 'Serve as the supervised child that loads the runtime for `runtime info` and `runtime install`: its version and device counts, as one JSON line on stdout'
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from info" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from info" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from info" -s h -l help -d 'Print help'
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from help" -f -a "install" -d 'Keep MegEngine\'s runtime libraries in the cache folder, beside other versions: copied from the active virtualenv\'s or python3\'s MegEngine where one has the version, else downloaded with pip (or from a wheel you have)'
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from help" -f -a "info" -d 'Show which runtime is used (path, version, devices, CUDA architectures, GPUs) and which are installed'
complete -c mge -n "__fish_mge_using_subcommand runtime; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mge -n "__fish_mge_using_subcommand completions" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand completions" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand completions" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand completions" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand completions" -s h -l help -d 'Print help'
complete -c mge -n "__fish_mge_using_subcommand man" -l lite-lib -d 'The MegEngine Lite shared library to use instead of the installed runtime' -r -F
complete -c mge -n "__fish_mge_using_subcommand man" -l runtime-version -d 'The installed runtime to use (e.g. 1.13.2+cu118) instead of the newest; --lite-lib wins over it' -r
complete -c mge -n "__fish_mge_using_subcommand man" -s v -l verbose -d 'Show engine logs and backtraces'
complete -c mge -n "__fish_mge_using_subcommand man" -s q -l quiet -d 'Print no notes or progress on stderr'
complete -c mge -n "__fish_mge_using_subcommand man" -s h -l help -d 'Print help'
complete -c mge -n "__fish_mge_using_subcommand help; and not __fish_seen_subcommand_from run info check profile dump compare tune pack-testcases runtime completions man help" -f -a "run" -d 'Load a model, feed it, run it and report outputs and timing'
complete -c mge -n "__fish_mge_using_subcommand help; and not __fish_seen_subcommand_from run info check profile dump compare tune pack-testcases runtime completions man help" -f -a "info" -d 'Show a model\'s format, inputs, outputs and testcases'
complete -c mge -n "__fish_mge_using_subcommand help; and not __fish_seen_subcommand_from run info check profile dump compare tune pack-testcases runtime completions man help" -f -a "check" -d 'Run every testcase embedded in each model and report pass or fail'
complete -c mge -n "__fish_mge_using_subcommand help; and not __fish_seen_subcommand_from run info check profile dump compare tune pack-testcases runtime completions man help" -f -a "profile" -d 'Run with the engine\'s profiler: top operators by time and a Chrome trace'
complete -c mge -n "__fish_mge_using_subcommand help; and not __fish_seen_subcommand_from run info check profile dump compare tune pack-testcases runtime completions man help" -f -a "dump" -d 'Write tensors out: outputs, every intermediate var, embedded testcases, the layout-transformed model'
complete -c mge -n "__fish_mge_using_subcommand help; and not __fish_seen_subcommand_from run info check profile dump compare tune pack-testcases runtime completions man help" -f -a "compare" -d 'Compare tensors (.npy, .npz, folders, io dumps), or two runs of models to the first diverging operator'
complete -c mge -n "__fish_mge_using_subcommand help; and not __fish_seen_subcommand_from run info check profile dump compare tune pack-testcases runtime completions man help" -f -a "tune" -d 'Find the fastest engine options that keep the outputs, each tried in its own process'
complete -c mge -n "__fish_mge_using_subcommand help; and not __fish_seen_subcommand_from run info check profile dump compare tune pack-testcases runtime completions man help" -f -a "pack-testcases" -d 'Run a model on feeds and write a testcase container: the feeds, and the outputs as expectations its AssertEqual operators check'
complete -c mge -n "__fish_mge_using_subcommand help; and not __fish_seen_subcommand_from run info check profile dump compare tune pack-testcases runtime completions man help" -f -a "runtime" -d 'Install or inspect the MegEngine Lite runtime'
complete -c mge -n "__fish_mge_using_subcommand help; and not __fish_seen_subcommand_from run info check profile dump compare tune pack-testcases runtime completions man help" -f -a "completions" -d 'Print shell completions'
complete -c mge -n "__fish_mge_using_subcommand help; and not __fish_seen_subcommand_from run info check profile dump compare tune pack-testcases runtime completions man help" -f -a "man" -d 'Write manual pages (mge.1 and one per subcommand) into DIR'
complete -c mge -n "__fish_mge_using_subcommand help; and not __fish_seen_subcommand_from run info check profile dump compare tune pack-testcases runtime completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mge -n "__fish_mge_using_subcommand help; and __fish_seen_subcommand_from runtime" -f -a "install" -d 'Keep MegEngine\'s runtime libraries in the cache folder, beside other versions: copied from the active virtualenv\'s or python3\'s MegEngine where one has the version, else downloaded with pip (or from a wheel you have)'
complete -c mge -n "__fish_mge_using_subcommand help; and __fish_seen_subcommand_from runtime" -f -a "info" -d 'Show which runtime is used (path, version, devices, CUDA architectures, GPUs) and which are installed'
