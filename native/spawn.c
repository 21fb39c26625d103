/*
 * warren's process start on Linux: posix_spawn, which glibc runs as clone(CLONE_VM|CLONE_VFORK).
 * Node 20's child_process forks the whole process first: its page tables are copied, every page
 * it writes afterwards faults once more, and the main thread waits in the fork (on the 2-core VM
 * warren is measured on, ~14 ms for a process's first start, ~4 ms for each after it).
 * src/system/native-spawn.ts is the only caller and says what it keeps of child_process's
 * behaviour; scripts/native.js builds this file (no build: child_process).
 *
 * spawn(file, argv, env, cwd, setsid, stdio) -> [pid, fd0, fd1, fd2] or -errno
 *   stdio[i]: 0 = /dev/null, 1 = a pipe (this process gets the other end, close-on-exec).
 *   file without a slash is looked up in env's PATH (as child_process does, not this process's).
 * reap(pid) -> null while it runs, else [exit code or -1, signal number or 0]
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *string_of(napi_env env, napi_value value) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok) return NULL;
  char *s = malloc(len + 1);
  if (s) napi_get_value_string_utf8(env, value, s, len + 1, &len);
  return s;
}

/* A NULL-terminated array of the strings in a JS array; NULL if it is not one. */
static char **strings_of(napi_env env, napi_value array) {
  uint32_t n = 0;
  if (napi_get_array_length(env, array, &n) != napi_ok) return NULL;
  char **out = calloc(n + 1, sizeof(char *));
  for (uint32_t i = 0; out && i < n; i++) {
    napi_value item;
    napi_get_element(env, array, i, &item);
    out[i] = string_of(env, item);
  }
  return out;
}

static void free_strings(char **strings) {
  if (!strings) return;
  for (char **s = strings; *s; s++) free(*s);
  free(strings);
}

/* execvp's search, in the child's PATH: the first executable regular file; NULL if none. */
static char *find_program(const char *file, char **env) {
  if (strchr(file, '/')) return strdup(file);
  const char *path = NULL;
  for (char **e = env; *e; e++)
    if (strncmp(*e, "PATH=", 5) == 0) path = *e + 5;
  if (!path) path = "/usr/local/bin:/usr/bin:/bin";
  size_t flen = strlen(file);
  for (const char *p = path; *p;) {
    const char *end = strchr(p, ':');
    size_t dlen = end ? (size_t)(end - p) : strlen(p);
    if (dlen > 0) {
      char *candidate = malloc(dlen + flen + 2);
      memcpy(candidate, p, dlen);
      candidate[dlen] = '/';
      memcpy(candidate + dlen + 1, file, flen + 1);
      struct stat st;
      if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && access(candidate, X_OK) == 0) return candidate;
      free(candidate);
    }
    if (!end) break;
    p = end + 1;
  }
  return NULL;
}

static napi_value number(napi_env env, int n) {
  napi_value v;
  napi_create_int32(env, n, &v);
  return v;
}

/* One start: what it needs, copied out of JavaScript's values, and what came of it. */
typedef struct {
  char *file, *cwd, **argv, **envp;
  bool setsid;
  int modes[3];
  int result; /* pid, or -errno */
  int mine[3]; /* this process's end of each pipe, or -1 */
} Job;

static void job_free(Job *job) {
  free(job->file);
  free(job->cwd);
  free_strings(job->argv);
  free_strings(job->envp);
  free(job);
}

/* Reads spawn()'s arguments; NULL (and a thrown error) when they are not what it takes. */
static Job *job_of(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value args[6];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  if (argc < 6) {
    napi_throw_type_error(env, NULL, "spawn(file, argv, env, cwd, setsid, stdio)");
    return NULL;
  }
  Job *job = calloc(1, sizeof(Job));
  if (!job) {
    napi_throw_error(env, NULL, "spawn: out of memory");
    return NULL;
  }
  job->file = string_of(env, args[0]);
  job->argv = strings_of(env, args[1]);
  job->envp = strings_of(env, args[2]);
  napi_valuetype cwd_type;
  napi_typeof(env, args[3], &cwd_type);
  job->cwd = cwd_type == napi_string ? string_of(env, args[3]) : NULL;
  napi_get_value_bool(env, args[4], &job->setsid);
  for (uint32_t i = 0; i < 3; i++) {
    napi_value m;
    napi_get_element(env, args[5], i, &m);
    napi_get_value_int32(env, m, &job->modes[i]);
  }
  return job;
}

/* The start itself, with what job_of read. */
static void job_run(Job *job) {
  int fds[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
  char *program = NULL;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  for (int i = 0; i < 3; i++) job->mine[i] = -1;
  if (!job->file || !job->argv || !job->envp) {
    job->result = -ENOMEM;
    goto done;
  }
  program = find_program(job->file, job->envp);
  if (!program) {
    job->result = -ENOENT;
    goto done;
  }
  for (int i = 0; i < 3; i++) {
    if (job->modes[i] == 1) {
      if (pipe2(fds[i], O_CLOEXEC) != 0) {
        job->result = -errno;
        goto done;
      }
      /* the child's end: the read end for stdin, the write end for stdout and stderr */
      posix_spawn_file_actions_adddup2(&actions, i == 0 ? fds[i][0] : fds[i][1], i);
    } else {
      posix_spawn_file_actions_addopen(&actions, i, "/dev/null", i == 0 ? O_RDONLY : O_WRONLY, 0);
    }
  }
  if (job->cwd) posix_spawn_file_actions_addchdir_np(&actions, job->cwd);
  /* As libuv does in the child: every signal back to its default (Node ignores SIGPIPE, and an
     ignored signal stays ignored across exec), none blocked. */
  sigset_t defaults, none;
  sigfillset(&defaults);
  sigdelset(&defaults, SIGKILL);
  sigdelset(&defaults, SIGSTOP);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  if (job->setsid) flags |= POSIX_SPAWN_SETSID;
  posix_spawnattr_setflags(&attr, flags);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, program, &actions, &attr, job->argv, job->envp);
  job->result = rc == 0 ? pid : -rc;

done:
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  free(program);
  for (int i = 0; i < 3; i++) {
    if (fds[i][0] < 0) continue;
    close(i == 0 ? fds[i][0] : fds[i][1]); /* the child's end: it has its copy */
    if (job->result > 0) job->mine[i] = i == 0 ? fds[i][1] : fds[i][0];
    else close(i == 0 ? fds[i][1] : fds[i][0]);
  }
}

static napi_value job_value(napi_env env, Job *job) {
  if (job->result <= 0) return number(env, job->result);
  napi_value out;
  napi_create_array_with_length(env, 4, &out);
  napi_set_element(env, out, 0, number(env, job->result));
  for (int i = 0; i < 3; i++) napi_set_element(env, out, i + 1, number(env, job->mine[i]));
  return out;
}

static napi_value Spawn(napi_env env, napi_callback_info info) {
  Job *job = job_of(env, info);
  if (!job) return NULL;
  job_run(job);
  napi_value out = job_value(env, job);
  job_free(job);
  return out;
}

static napi_value Reap(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value args[1];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  int32_t pid = 0;
  napi_get_value_int32(env, args[0], &pid);
  int status = 0;
  pid_t got;
  do got = waitpid(pid, &status, WNOHANG);
  while (got < 0 && errno == EINTR);
  napi_value out;
  if (got == 0) {
    napi_get_null(env, &out);
    return out;
  }
  napi_create_array_with_length(env, 2, &out);
  if (got < 0) { /* not our child any more (reaped elsewhere): report it as gone, unknown how */
    napi_set_element(env, out, 0, number(env, -1));
    napi_set_element(env, out, 1, number(env, 0));
  } else {
    napi_set_element(env, out, 0, number(env, WIFEXITED(status) ? WEXITSTATUS(status) : -1));
    napi_set_element(env, out, 1, number(env, WIFSIGNALED(status) ? WTERMSIG(status) : 0));
  }
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "spawn", NAPI_AUTO_LENGTH, Spawn, NULL, &fn);
  napi_set_named_property(env, exports, "spawn", fn);
  napi_create_function(env, "reap", NAPI_AUTO_LENGTH, Reap, NULL, &fn);
  napi_set_named_property(env, exports, "reap", fn);
  return exports;
}
