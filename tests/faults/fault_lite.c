/*
 * A stand-in for the MegEngine Lite C API that fails the way the real engine
 * can, so that the tests can show on any CPU what `mge` makes of it.
 *
 * MGE_FAULT chooses the failure, MGE_FAULT_AT where it happens ("load": in
 * LITE_load_model_from_mem; "open": as the library is loaded, before any
 * call; "count": in LITE_get_device_count; otherwise in LITE_forward):
 *   exit   the engine's worker threads start (one per --threads, named as
 *          MegEngine names them); the first registers an exit handler that
 *          waits for all of them (as MegEngine's CompNode::finalize does),
 *          then prints what MegEngine's oneDNN prints and calls exit(1) while
 *          the others and the calling thread wait: a deadlock that no handler
 *          registered earlier can prevent, as with the real engine at 2+ threads.
 *   abort  logs an error line as MegEngine's log handler writes it, then abort()
 *   segv   a write through a null pointer
 *   hang   never returns
 *   wrong  the output is all ones instead of zeros
 *   error  the call fails after the engine's kind of log entry and backtrace
 *   quit   says what glibc says when a thread's TLS cannot be allocated and
 *          ends the process with _exit(MGE_FAULT_STATUS, default 127), which
 *          no exit handler (and no trap of the tool's) sees
 *   deadlock  locks a mutex it holds: asleep on a futex, no CPU time, forever
 *   nothread  a thread cannot start (pthread_create fails), and the caller
 *          waits for it forever without a lock: asleep in usleep, as the
 *          engine spins for a worker thread it could not start
 *   signal  ends the process with signal MGE_FAULT_SIGNAL (its default action)
 *   scribble  writes onto the last pipe in the descriptor table that it
 *          can write to (where mge keeps its channel) a 2 MiB line, a line
 *          of garbage, and a line announcing staging folder MGE_FAULT_PATH;
 *          then goes on as without a fault
 *   close  closes that pipe, then goes on as without a fault
 *   slow   the call sleeps MGE_FAULT_MS milliseconds (default 50), then does its work
 * MGE_FAULT_ONLY_WITH limits the failure to networks built with one option:
 * "layout-transform" or "cpu-inplace", or to a process whose command line holds
 * an argument of mge's, such as "--record-comp-seq" (the first candidate tune
 * tries, whatever the machine's load); MGE_FAULT_SHAPE (e.g. "2,3,16,16") to
 * an input fed in that shape, as an engine that fails at one shape;
 * MGE_FAULT_VAR to a model (FBS v2) that lists a var of that name, as an
 * engine that fails in the operator writing it: a graph cut before it runs.
 * MGE_FAULT_SLOW_VAR makes LITE_forward first sleep MGE_FAULT_MS milliseconds
 * (default 50) on a model that lists a var of that name, as an engine that
 * takes long over a larger part of a graph: a deadline the whole model runs
 * into then hides the failure a smaller part comes to sooner.
 * MGE_FAULT_PATTERN (of '0' and '1') with MGE_FAULT_COUNTER (a file) makes
 * the failure come and go, as an engine that fails now and then, the same
 * way on every machine: each process that comes to the failure takes the
 * next number from that file (0 where it holds none), and fails only where
 * the pattern's character at that number (modulo its length) is '1' ("10":
 * every other process). A process decides once: its later calls go as its first.
 * Without MGE_FAULT it behaves like a model with input "data" (1,3,16,16)
 * and output "feat" (1,8), both float32, whose output is all zeros, made by
 * one operator: its profile (written when the network goes, as MegEngine's
 * is) and its binary io dump hold that operator and "feat".
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LAYOUT_MAX_DIM 7

typedef struct {
    size_t shapes[LAYOUT_MAX_DIM];
    size_t ndim;
    int data_type;
} LiteLayout;

typedef struct {
    LiteLayout layout;
    float *data;
    size_t capacity;
} FakeTensor;

static float input_data[3 * 16 * 16], output_data[8];
static FakeTensor input = {{{1, 3, 16, 16}, 4, 0}, input_data, 3 * 16 * 16};
static FakeTensor output = {{{1, 8}, 2, 0}, output_data, 8};
/* Whether the model loaded lists the var MGE_FAULT_VAR, and MGE_FAULT_SLOW_VAR, names. */
static int has_faulty_var, has_slow_var;
static char config[1024];
static int network;
static const char *input_names[] = {"data"};
static const char *output_names[] = {"feat"};

#define MAX_WORKERS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t workers_done = PTHREAD_COND_INITIALIZER;
static size_t threads = 1, workers, finished;

/* The engine's exit handler: waits for every worker, the exiting one included. */
static void wait_for_workers(void) {
    pthread_mutex_lock(&lock);
    while (finished < workers) pthread_cond_wait(&workers_done, &lock);
    pthread_mutex_unlock(&lock);
}

static void *worker(void *arg) {
    size_t index = (size_t)arg;
    char name[16];
    if (threads == 1)
        snprintf(name, sizeof name, "cpu0:0");
    else
        snprintf(name, sizeof name, "multithread%zu:%zu", threads, index);
    pthread_setname_np(pthread_self(), name);
    if (index == 0) {
        /* Registered now, from this thread: after anything the tool did at load. */
        atexit(wait_for_workers);
        fprintf(stderr, "bad err=45 in Xbyak::Error\n");
        exit(1);
    }
    for (;;) pause();
    return NULL;
}

static void exit_from_workers(void) {
    pthread_t thread[MAX_WORKERS];
    workers = threads < MAX_WORKERS ? threads : MAX_WORKERS;
    for (size_t i = 0; i < workers; i++) pthread_create(&thread[i], NULL, worker, (void *)i);
    for (size_t i = 0; i < workers; i++) pthread_join(thread[i], NULL);
}

static void *never_runs(void *arg) { return arg; }

/* The highest descriptor above stderr that is a pipe open for writing only, or -1. */
static int last_writable_pipe(void) {
    for (int fd = 4095; fd > 2; fd--) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_WRONLY)
            return fd;
    }
    return -1;
}

static void write_all(int fd, const char *bytes, size_t size) {
    while (size > 0) {
        ssize_t written = write(fd, bytes, size);
        if (written <= 0) return;
        bytes += written;
        size -= (size_t)written;
    }
}

static void scribble(int fd) {
    size_t size = 2 << 20;
    char *line = malloc(size + 1);
    if (!line) return;
    memset(line, 'x', size);
    line[size] = '\n';
    write_all(fd, line, size + 1);
    free(line);
    const char *garbage = "\x01not an event {\"event\":\n";
    write_all(fd, garbage, strlen(garbage));
    char staging[4096];
    const char *path = getenv("MGE_FAULT_PATH");
    int n = snprintf(staging, sizeof staging, "{\"event\":\"staging\",\"path\":\"%s\",\"exists\":true}\n",
                     path ? path : "");
    if (n > 0 && (size_t)n < sizeof staging) write_all(fd, staging, (size_t)n);
}

static int layout_transform, cpu_inplace;

/* Whether the input is fed in the shape MGE_FAULT_SHAPE names ("2,3,16,16"). */
static int fed_in_faulty_shape(const char *shape) {
    char written[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < input.layout.ndim && used < sizeof written; i++)
        used += (size_t)snprintf(written + used, sizeof written - used, i ? ",%zu" : "%zu", input.layout.shapes[i]);
    return !strcmp(written, shape);
}

/* Whether this process fails, as MGE_FAULT_PATTERN says: decided at its first call here. */
static int fails_this_time(void) {
    static int decided = -1;
    const char *pattern = getenv("MGE_FAULT_PATTERN");
    const char *counter = getenv("MGE_FAULT_COUNTER");
    if (!pattern || !*pattern || !counter) return 1;
    if (decided >= 0) return decided;
    long count = 0;
    int fd = open(counter, O_RDWR | O_CREAT, 0600);
    if (fd >= 0 && flock(fd, LOCK_EX) == 0) {
        char text[32] = "";
        ssize_t n = pread(fd, text, sizeof text - 1, 0);
        if (n > 0) count = atol(text);
        int length = snprintf(text, sizeof text, "%ld\n", count + 1);
        if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)length, 0) != length) count = 0;
    }
    if (fd >= 0) close(fd);
    decided = pattern[count % (long)strlen(pattern)] == '1';
    return decided;
}

/* Sleeps MGE_FAULT_MS milliseconds (default 50), whole: a sleep a signal cuts short is slept to its end. */
static void sleep_fault_ms(void) {
    const char *ms = getenv("MGE_FAULT_MS");
    long total = ms ? atol(ms) : 50;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += total / 1000;
    until.tv_nsec += (total % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec += 1;
        until.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) != 0) {}
}

/* Whether this process's command line holds the option `arg`, alone or as `arg=VALUE`
 * (how mge writes its children's options). */
static int command_line_has(const char *arg) {
    static char line[65536];
    int fd = open("/proc/self/cmdline", O_RDONLY);
    if (fd < 0) return 0;
    ssize_t length = read(fd, line, sizeof line - 1);
    close(fd);
    if (length <= 0) return 0;
    line[length] = 0;
    size_t size = strlen(arg);
    for (char *at = line; at < line + length; at += strlen(at) + 1)
        if (!strncmp(at, arg, size) && (at[size] == 0 || at[size] == '=')) return 1;
    return 0;
}

static int fail_here(const char *where) {
    const char *fault = getenv("MGE_FAULT");
    const char *at = getenv("MGE_FAULT_AT");
    const char *only_with = getenv("MGE_FAULT_ONLY_WITH");
    const char *shape = getenv("MGE_FAULT_SHAPE");
    if (!fault || strcmp(at ? at : "forward", where) != 0) return 0;
    if (only_with && !((!strcmp(only_with, "layout-transform") && layout_transform) ||
                       (!strcmp(only_with, "cpu-inplace") && cpu_inplace) ||
                       (only_with[0] == '-' && command_line_has(only_with))))
        return 0;
    if (shape && !fed_in_faulty_shape(shape)) return 0;
    if (getenv("MGE_FAULT_VAR") && !has_faulty_var) return 0;
    if (!fails_this_time()) return 0;
    if (!strcmp(fault, "exit")) {
        exit_from_workers();
    } else if (!strcmp(fault, "abort")) {
        /* As the engine logs before it aborts: its log handler's header, then the message. */
        fprintf(stderr, "[23 08:29:00 apply@framework.cpp:580][ERR] fault: aborting\n");
        abort();
    } else if (!strcmp(fault, "segv")) {
        fprintf(stderr, "fault: writing through a null pointer\n");
        *(volatile int *)0 = 1;
    } else if (!strcmp(fault, "hang")) {
        for (;;) pause();
    } else if (!strcmp(fault, "wrong")) {
        for (size_t i = 0; i < 8; i++) output.data[i] = 1.0f;
    } else if (!strcmp(fault, "quit")) {
        const char *status = getenv("MGE_FAULT_STATUS");
        fprintf(stderr, "cannot allocate memory for thread-local data: ABORT\n");
        _exit(status ? atoi(status) : 127);
    } else if (!strcmp(fault, "deadlock")) {
        static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
        pthread_mutex_lock(&held);
        pthread_mutex_lock(&held);
    } else if (!strcmp(fault, "nothread")) {
        pthread_attr_t attributes;
        pthread_t thread;
        pthread_attr_init(&attributes);
        /* More stack than any address space has room for. */
        pthread_attr_setstacksize(&attributes, (size_t)1 << 46);
        if (pthread_create(&thread, &attributes, never_runs, NULL) != 0)
            for (;;) usleep(100000);
    } else if (!strcmp(fault, "signal")) {
        const char *number = getenv("MGE_FAULT_SIGNAL");
        int sig = number ? atoi(number) : SIGUSR1;
        signal(sig, SIG_DFL);
        raise(sig);
    } else if (!strcmp(fault, "scribble") || !strcmp(fault, "close")) {
        int fd = last_writable_pipe();
        if (fd >= 0 && !strcmp(fault, "close"))
            close(fd);
        else if (fd >= 0)
            scribble(fd);
    } else if (!strcmp(fault, "slow")) {
        sleep_fault_ms();
    } else if (!strcmp(fault, "error")) {
        fprintf(stderr, "[23 08:29:00 apply@framework.cpp:580][ERR] fault: the pass failed\n\nbacktrace:\n"
                        "/lib/libmegengine_shared.so(_ZN3mgb13MegBrainErrorC1ERKSs+0x4a) [0x7fb86344686a]\n"
                        "LITE[ERR] Lite exception: fault\n");
        return -1;
    }
    return 0;
}

__attribute__((constructor)) static void on_open(void) { fail_here("open"); }

int LITE_get_version(int *major, int *minor, int *patch) {
    *major = 1;
    *minor = 13;
    *patch = 0;
    return 0;
}
const char *LITE_get_last_error(void) { return "fault library error"; }
void LITE_clear_last_error(void) {}
int LITE_get_device_count(int device_type, size_t *count) {
    fail_here("count");
    *count = device_type == 0 ? 1 : 0;
    return 0;
}
int LITE_set_log_level(int level) { (void)level; return 0; }
int LITE_set_persistent_cache(const char *path, int always_sync) { (void)path; (void)always_sync; return 0; }
int LITE_dump_persistent_cache(const char *path) { (void)path; return 0; }
void *default_config(void) { return config; }
/* LiteConfig by value; never read here, so its exact layout does not matter. */
typedef struct {
    char bytes[128];
} AnyConfig;

int LITE_make_network_config(void **network_out, AnyConfig unused) {
    (void)unused;
    layout_transform = cpu_inplace = 0;
    for (size_t i = 0; i < 8; i++) output.data[i] = 0.0f;
    *network_out = &network;
    return 0;
}
static char profile_path[4096];

/* The profile of the one operator, written as MegEngine writes its own: when the network goes. */
int LITE_destroy_network(void *net) {
    (void)net;
    if (profile_path[0]) {
        FILE *file = fopen(profile_path, "w");
        if (file) {
            fputs("{\"profiler\": {}, \"graph_exec\": {\"comp_seq\": [\"1\"], \"operator\": {\"1\": "
                  "{\"name\": \"feat_op\", \"type\": \"Elemwise\", \"input\": [], \"output\": [\"2\"]}}, "
                  "\"var\": {\"2\": {\"name\": \"feat\"}}}}\n",
                  file);
            fclose(file);
        }
        profile_path[0] = 0;
    }
    return 0;
}
/* The little-endian u32 at `at` of a buffer of `size` bytes; 0 past its end. */
static unsigned read_u32(const unsigned char *buf, size_t size, size_t at) {
    if (at > size || size - at < 4) return 0;
    return buf[at] | (unsigned)buf[at + 1] << 8 | (unsigned)buf[at + 2] << 16 | (unsigned)buf[at + 3] << 24;
}

/* Where field `index` of the table at `table` points (an offset field), or 0. */
static size_t field_target(const unsigned char *buf, size_t size, size_t table, size_t index) {
    size_t vtable = table - (size_t)(int)read_u32(buf, size, table);
    if (vtable > size || size - vtable < 4) return 0;
    size_t vtable_len = buf[vtable] | (size_t)buf[vtable + 1] << 8;
    size_t entry = vtable + 4 + 2 * index;
    if (4 + 2 * index + 2 > vtable_len || entry + 2 > size) return 0;
    size_t offset = buf[entry] | (size_t)buf[entry + 1] << 8;
    return offset ? table + offset + read_u32(buf, size, table + offset) : 0;
}

/* Whether the FBS v2 graph `model` (size-prefixed) lists a var named `name`:
   Model.middle_tensors (field 3), each MiddleTensor's name (field 0). */
static int lists_var(const unsigned char *model, size_t size, const char *name) {
    if (size < 8) return 0;
    const unsigned char *buf = model + 4;
    size -= 4;
    size_t vars = field_target(buf, size, read_u32(buf, size, 0), 3);
    unsigned count = vars ? read_u32(buf, size, vars) : 0;
    for (unsigned i = 0; i < count; i++) {
        size_t slot = vars + 4 + 4 * (size_t)i;
        size_t string = field_target(buf, size, slot + read_u32(buf, size, slot), 0);
        size_t length = string ? read_u32(buf, size, string) : 0;
        if (string && length == strlen(name) && string + 4 + length <= size && !memcmp(buf + string + 4, name, length))
            return 1;
    }
    return 0;
}

int LITE_load_model_from_mem(void *net, void *model, size_t size) {
    (void)net;
    const char *name = getenv("MGE_FAULT_VAR");
    const char *slow = getenv("MGE_FAULT_SLOW_VAR");
    /* Kept once set: a container's testcase graphs, loaded after its model, list other vars. */
    has_faulty_var |= name && lists_var(model, size, name);
    has_slow_var |= slow && lists_var(model, size, slow);
    return fail_here("load");
}
int LITE_set_cpu_inplace_mode(void *net) {
    (void)net;
    cpu_inplace = 1;
    return 0;
}
int LITE_set_cpu_threads_number(void *net, size_t n) {
    (void)net;
    threads = n ? n : 1;
    return 0;
}
int LITE_use_tensorrt(void *net) { (void)net; return 0; }
int LITE_set_network_algo_policy(void *net, int policy) { (void)net; (void)policy; return 0; }
int LITE_set_network_algo_workspace_limit(void *net, size_t limit) { (void)net; (void)limit; return 0; }
int LITE_enable_global_layout_transform(void *net) {
    (void)net;
    layout_transform = 1;
    return 0;
}
int LITE_enable_profile_performance(void *net, const char *path) {
    (void)net;
    snprintf(profile_path, sizeof profile_path, "%s", path);
    return 0;
}
int LITE_enable_io_txt_dump(void *net, const char *path) { (void)net; (void)path; return 0; }
static char io_dump_dir[4096];

int LITE_enable_io_bin_dump(void *net, const char *dir) {
    (void)net;
    snprintf(io_dump_dir, sizeof io_dump_dir, "%s", dir);
    return 0;
}

/* "feat" (var 2) as the engine's binary dump writes a var: a header, its title, its values. */
static void dump_output(void) {
    char path[4200];
    snprintf(path, sizeof path, "%s/000002", io_dump_dir);
    FILE *file = fopen(path, "wb");
    if (!file) return;
    static const char title[] = "var2 feat";
    unsigned header[3 + 7] = {sizeof title - 1, 0, 7, 1, 8};
    fwrite(header, sizeof header, 1, file);
    fwrite(title, sizeof title - 1, 1, file);
    fwrite(output.data, sizeof(float), 8, file);
    fclose(file);
}
int LITE_dump_layout_transform_model(void *net, const char *path) { (void)net; (void)path; return 0; }
int LITE_forward(void *net) {
    (void)net;
    if (has_slow_var) sleep_fault_ms();
    int failed = fail_here("forward");
    if (!failed && io_dump_dir[0]) dump_output();
    return failed;
}
int LITE_wait(void *net) { (void)net; return 0; }

static int names(const char **list, size_t *size, const char **out) {
    if (size) *size = 1;
    if (out) out[0] = list[0];
    return 0;
}
int LITE_get_all_input_name(void *net, size_t *size, const char **out) { (void)net; return names(input_names, size, out); }
int LITE_get_all_output_name(void *net, size_t *size, const char **out) { (void)net; return names(output_names, size, out); }
int LITE_get_io_tensor(void *net, const char *name, int phase, void **tensor) {
    (void)net; (void)phase;
    *tensor = !strcmp(name, "data") ? (void *)&input : !strcmp(name, "feat") ? (void *)&output : NULL;
    return 0;
}
int LITE_get_tensor_layout(void *tensor, LiteLayout *layout) {
    *layout = ((FakeTensor *)tensor)->layout;
    return 0;
}
/* The input takes any float32 shape, as a model whose input is not fixed. */
int LITE_set_tensor_layout(void *tensor, LiteLayout layout) {
    FakeTensor *fake = tensor;
    if (fake != &input || layout.ndim > LAYOUT_MAX_DIM) return 0;
    size_t count = 1;
    for (size_t i = 0; i < layout.ndim; i++) count *= layout.shapes[i];
    if (count > fake->capacity) {
        float *data = calloc(count, sizeof(float));
        if (!data) return -1;
        fake->data = data;
        fake->capacity = count;
    }
    fake->layout = layout;
    return 0;
}
int LITE_get_tensor_memory(void *tensor, void **memory) {
    *memory = ((FakeTensor *)tensor)->data;
    return 0;
}
int LITE_update_decryption_or_key(const char *name, const void *func, const unsigned char *key, size_t size) {
    (void)name; (void)func; (void)key; (void)size; return 0;
}
int LITE_set_network_algo_fastrun_config(void *net, unsigned batch, int equal) { (void)net; (void)batch; (void)equal; return 0; }
int LITE_set_loader_lib_path(const char *path) { (void)path; return 0; }
int LITE_set_tensor_rt_cache(const char *path) { (void)path; return 0; }
int LITE_dump_tensor_rt_cache(void) { return 0; }
int LITE_get_tensor_total_size_in_byte(void *tensor, size_t *size) {
    LiteLayout *layout = &((FakeTensor *)tensor)->layout;
    *size = 4;
    for (size_t i = 0; i < layout->ndim; i++) *size *= layout->shapes[i];
    return 0;
}
/* Copies of a network and where their threads run. */
int LITE_shared_weight_with_network(void *dst, void *src) { (void)dst; (void)src; return 0; }
int LITE_share_runtime_memroy(void *dst, void *src) { (void)dst; (void)src; return 0; }
int LITE_set_stream_id(void *net, int stream) { (void)net; (void)stream; return 0; }
int LITE_set_runtime_thread_affinity(void *net, int (*callback)(int)) { (void)net; (void)callback; return 0; }
