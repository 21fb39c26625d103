import type { Command } from 'commander';

/**
 * Shell completion scripts, generated from the commander definitions (so a new command or
 * option completes with no other change). Task IDs and types come from the state at the moment
 * of completing: the script calls `warren __complete ids|types` (hidden), passing on `--repo`.
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** What an argument completes to: the repository's task IDs, archived IDs or types, a shell, a file, or nothing. */
type ArgKind = 'id' | 'archived' | 'type' | 'shell' | 'file' | 'none';

interface CommandSpec {
  /** `new`, or `queue rm` for a subcommand. */
  name: string;
  description: string;
  /** Every flag, long and short. */
  flags: string[];
  /** The flags that take a value (the next word is theirs). */
  valueFlags: string[];
  args: ArgKind[];
  /** Subcommands' names, for a command that has them. */
  subs: string[];
}

const internals = (cmd: Command) => cmd as unknown as { _hidden?: boolean };

function argKind(command: string, name: string): ArgKind {
  // `new` names a task that does not exist yet; `restore` one that exists only as an archive.
  if (name === 'id') return command === 'new' ? 'none' : command === 'restore' ? 'archived' : 'id';
  if (name === 'type') return 'type';
  if (name === 'shell') return 'shell';
  if (name === 'file' || name === 'file:line') return 'file';
  return 'none';
}

/** Pure: every visible command (and subcommand) with its flags and arguments. */
export function completionSpec(program: Command): {
  global: { flags: string[]; valueFlags: string[] };
  commands: CommandSpec[];
} {
  const flagsOf = (cmd: Command) => {
    const flags: string[] = [];
    const valueFlags: string[] = [];
    for (const o of cmd.options) {
      if (o.hidden) continue;
      const names = [o.long, o.short].filter((n): n is string => typeof n === 'string');
      flags.push(...names);
      if (o.required || o.optional) valueFlags.push(...names);
    }
    return { flags, valueFlags };
  };
  const commands: CommandSpec[] = [];
  const walk = (cmd: Command, prefix: string): void => {
    for (const sub of cmd.commands) {
      if (internals(sub)._hidden) continue;
      const name = `${prefix}${sub.name()}`;
      const visibleSubs = sub.commands.filter((c) => !internals(c)._hidden).map((c) => c.name());
      commands.push({
        name,
        description: sub.description(),
        ...flagsOf(sub),
        args: sub.registeredArguments.map((a) => argKind(name, a.name())),
        subs: visibleSubs,
      });
      if (visibleSubs.length > 0) walk(sub, `${name} `);
    }
  };
  walk(program, '');
  return { global: flagsOf(program), commands };
}

export function completionScript(program: Command, shell: Shell): string {
  const spec = completionSpec(program);
  switch (shell) {
    case 'bash':
      return bashScript(spec);
    case 'zsh':
      return zshScript(spec);
    case 'fish':
      return fishScript(spec);
  }
}

type Spec = ReturnType<typeof completionSpec>;

const words = (list: readonly string[]): string => list.join(' ');

/** `case` arms shared by bash and zsh: they set the spec of the command named by `$1`. */
function specFunction(spec: Spec): string {
  const arms = spec.commands.map(
    (c) =>
      `    '${c.name}') _w_flags='${words(c.flags)}'; _w_vflags='${words(c.valueFlags)}'; _w_args='${words(c.args)}'; _w_subs='${words(c.subs)}' ;;`,
  );
  return [
    '_warren_spec() {',
    '  case "$1" in',
    ...arms,
    "    *) _w_flags=''; _w_vflags=''; _w_args=''; _w_subs='' ;;",
    '  esac',
    '}',
  ].join('\n');
}

/**
 * The walk over the words before the cursor, shared by bash and zsh (both run it the same way):
 * it finds the command (and subcommand), how many arguments were given, whether the previous
 * word wants a value, `--repo`, and whether `--` was passed.
 */
function walkFunction(spec: Spec): string {
  const topLevel = words(spec.commands.filter((c) => !c.name.includes(' ')).map((c) => c.name));
  return `_warren_walk() {
  # $@: the words before the one being completed, the program's name first.
  _w_cmd=''; _w_npos=0; _w_want=''; _w_repo=''; _w_dashdash=''
  shift
  while [ $# -gt 0 ]; do
    _w_word="$1"; shift
    if [ -n "$_w_want" ]; then
      [ "$_w_want" = --repo ] && _w_repo="$_w_word"
      _w_want=''; continue
    fi
    if [ -n "$_w_dashdash" ]; then _w_npos=$((_w_npos + 1)); continue; fi
    case "$_w_word" in
      --) _w_dashdash=1; continue ;;
      --repo) _w_want=--repo; continue ;;
      --repo=*) _w_repo="\${_w_word#--repo=}"; continue ;;
      -*)
        _warren_spec "$_w_cmd"
        case " $_w_vflags ${words(spec.global.valueFlags)} " in *" $_w_word "*) _w_want="$_w_word" ;; esac
        continue ;;
    esac
    if [ -z "$_w_cmd" ]; then
      case " ${topLevel} " in *" $_w_word "*) _w_cmd="$_w_word" ;; *) _w_cmd="?" ;; esac
      continue
    fi
    _warren_spec "$_w_cmd"
    if [ -n "$_w_subs" ] && [ "$_w_npos" -eq 0 ]; then
      case " $_w_subs " in *" $_w_word "*) _w_cmd="$_w_cmd $_w_word"; continue ;; esac
    fi
    _w_npos=$((_w_npos + 1))
  done
  _warren_spec "$_w_cmd"
}

_warren_arg_kind() {
  # The kind of argument number $_w_npos (from 0) of the current command.
  _w_i=0; _w_kind=none
  for _w_a in $_w_args; do
    if [ "$_w_i" -eq "$_w_npos" ]; then _w_kind="$_w_a"; break; fi
    _w_i=$((_w_i + 1))
  done
}`;
}

function bashScript(spec: Spec): string {
  const top = words(spec.commands.filter((c) => !c.name.includes(' ')).map((c) => c.name));
  return `# warren completion for bash. Load it with: source <(warren completion bash)
${specFunction(spec)}

${walkFunction(spec)}

_warren() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  _warren_walk "\${COMP_WORDS[@]:0:COMP_CWORD}"
  local repo=(); [ -n "$_w_repo" ] && repo=(--repo "$_w_repo")
  COMPREPLY=()
  if [ "$_w_want" = --repo ]; then COMPREPLY=($(compgen -d -- "$cur")); return; fi
  if [ -n "$_w_want" ]; then COMPREPLY=($(compgen -f -- "$cur")); return; fi
  if [ -n "$_w_dashdash" ]; then COMPREPLY=($(compgen -f -- "$cur")); return; fi
  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$_w_flags ${words(spec.global.flags)} --help" -- "$cur")); return; fi
  if [ -z "$_w_cmd" ]; then COMPREPLY=($(compgen -W "${top} help" -- "$cur")); return; fi
  if [ -n "$_w_subs" ] && [ "$_w_npos" -eq 0 ]; then COMPREPLY=($(compgen -W "$_w_subs" -- "$cur")); return; fi
  _warren_arg_kind
  case "$_w_kind" in
    id) COMPREPLY=($(compgen -W "$(warren "\${repo[@]}" __complete ids 2>/dev/null)" -- "$cur")) ;;
    archived) COMPREPLY=($(compgen -W "$(warren "\${repo[@]}" __complete archived 2>/dev/null)" -- "$cur")) ;;
    type) COMPREPLY=($(compgen -W "$(warren "\${repo[@]}" __complete types 2>/dev/null)" -- "$cur")) ;;
    shell) COMPREPLY=($(compgen -W "${words(SHELLS)}" -- "$cur")) ;;
    file) COMPREPLY=($(compgen -f -- "$cur")) ;;
  esac
}
complete -F _warren warren
`;
}

function zshScript(spec: Spec): string {
  const top = spec.commands.filter((c) => !c.name.includes(' '));
  const described = top
    .map((c) => `'${c.name}:${c.description.replaceAll("'", "'\\''").replaceAll(':', '\\:')}'`)
    .join(' ');
  return `#compdef warren
# warren completion for zsh. Load it after compinit with: source <(warren completion zsh)
${specFunction(spec)}

${walkFunction(spec)}

_warren() {
  local -a before; before=("\${(@)words[1,CURRENT-1]}")
  local cur="\${words[CURRENT]}"
  # The shared walk splits lists on spaces, as sh does.
  setopt localoptions shwordsplit
  _warren_walk "\${before[@]}"
  local -a repo; [ -n "$_w_repo" ] && repo=(--repo "$_w_repo")
  if [ "$_w_want" = --repo ]; then _files -/; return; fi
  if [ -n "$_w_want" ] || [ -n "$_w_dashdash" ]; then _files; return; fi
  case "$cur" in -*) compadd -- \${=_w_flags} ${words(spec.global.flags)} --help; return ;; esac
  if [ -z "$_w_cmd" ]; then
    local -a cmds; cmds=(${described})
    _describe -t commands 'warren command' cmds; return
  fi
  if [ -n "$_w_subs" ] && [ "$_w_npos" -eq 0 ]; then compadd -- \${=_w_subs}; return; fi
  _warren_arg_kind
  case "$_w_kind" in
    id) compadd -- \${(f)"$(warren "\${repo[@]}" __complete ids 2>/dev/null)"} ;;
    archived) compadd -- \${(f)"$(warren "\${repo[@]}" __complete archived 2>/dev/null)"} ;;
    type) compadd -- \${(f)"$(warren "\${repo[@]}" __complete types 2>/dev/null)"} ;;
    shell) compadd -- ${words(SHELLS)} ;;
    file) _files ;;
  esac
}
if (( $+functions[compdef] )); then compdef _warren warren; fi
`;
}

function fishScript(spec: Spec): string {
  const quote = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
  const top = spec.commands.filter((c) => !c.name.includes(' '));
  const lines = [
    '# warren completion for fish. Load it with: warren completion fish | source',
    '# (or save it as ~/.config/fish/completions/warren.fish)',
    'function __warren_state',
    '    # The command (and subcommand) and how many arguments it has, from the words before the cursor.',
    '    set -l tokens (commandline -opc)',
    '    set -e tokens[1]',
    "    set -l cmd ''",
    '    set -l npos 0',
    "    set -l want ''",
    "    set -l repo ''",
    '    for w in $tokens',
    '        if test -n "$want"',
    '            test "$want" = --repo; and set repo $w',
    "            set want ''",
    '            continue',
    '        end',
    '        switch $w',
    '            case --repo',
    '                set want --repo',
    '                continue',
    '            case "--repo=*"',
    '                set repo (string replace -- --repo= "" $w)',
    '                continue',
    '            case "-*"',
    '                contains -- $w (__warren_value_flags "$cmd"); and set want $w',
    '                continue',
    '        end',
    '        if test -z "$cmd"',
    '            set cmd $w',
    '        else if test $npos -eq 0; and contains -- $w (__warren_subs "$cmd")',
    '            set cmd "$cmd $w"',
    '        else',
    '            set npos (math $npos + 1)',
    '        end',
    '    end',
    '    echo $cmd',
    '    echo $npos',
    '    echo $want',
    '    echo $repo',
    'end',
    'function __warren_value_flags',
    '    switch $argv[1]',
    ...spec.commands.map(
      (c) =>
        `        case ${quote(c.name)}\n            printf "%s\\n" ${[...c.valueFlags, ...spec.global.valueFlags].map(quote).join(' ')}`,
    ),
    '    end',
    '    printf "%s\\n" ' + spec.global.valueFlags.map(quote).join(' '),
    'end',
    'function __warren_subs',
    '    switch $argv[1]',
    ...spec.commands
      .filter((c) => c.subs.length > 0)
      .map((c) => `        case ${quote(c.name)}\n            printf "%s\\n" ${c.subs.map(quote).join(' ')}`),
    '    end',
    'end',
    'function __warren_args',
    '    switch $argv[1]',
    ...spec.commands.map(
      (c) => `        case ${quote(c.name)}\n            printf "%s\\n" ${c.args.map(quote).join(' ') || "''"}`,
    ),
    '    end',
    'end',
    'function __warren_no_command',
    '    set -l s (__warren_state)',
    '    test -z "$s[1]"',
    'end',
    'function __warren_command_is',
    '    set -l s (__warren_state)',
    '    test "$s[1]" = "$argv[1]"',
    'end',
    'function __warren_arg_is',
    '    # The argument being completed is of kind $argv[1].',
    '    set -l s (__warren_state)',
    '    test -z "$s[1]"; and return 1',
    '    test -n "$s[3]"; and return 1',
    '    set -l subs (__warren_subs "$s[1]")',
    '    if test (count $subs) -gt 0; and test "$s[2]" -eq 0',
    '        return 1',
    '    end',
    '    set -l kinds (__warren_args "$s[1]")',
    '    set -l i (math $s[2] + 1)',
    '    test (count $kinds) -ge $i; and test "$kinds[$i]" = "$argv[1]"',
    'end',
    'function __warren_subs_now',
    '    set -l s (__warren_state)',
    '    test -n "$s[1]"; and test "$s[2]" -eq 0; and test (count (__warren_subs "$s[1]")) -gt 0',
    'end',
    'function __warren_complete',
    '    set -l s (__warren_state)',
    '    if test -n "$s[4]"',
    '        warren --repo $s[4] __complete $argv 2>/dev/null',
    '    else',
    '        warren __complete $argv 2>/dev/null',
    '    end',
    'end',
    'complete -c warren -f',
    ...spec.global.flags
      .filter((f) => f.startsWith('--'))
      .map((f) => `complete -c warren -l ${f.slice(2)}${spec.global.valueFlags.includes(f) ? ' -r' : ''}`),
    ...top.map(
      (c) => `complete -c warren -n __warren_no_command -a ${quote(c.name)} -d ${quote(c.description.slice(0, 80))}`,
    ),
    ...spec.commands
      .filter((c) => c.subs.length > 0)
      .map(
        (c) =>
          `complete -c warren -n ${quote(`__warren_command_is ${quote(c.name)}; and __warren_subs_now`)} -a ${quote(words(c.subs))}`,
      ),
    ...spec.commands.flatMap((c) =>
      c.flags
        .filter((f) => f.startsWith('--'))
        .map(
          (f) =>
            `complete -c warren -n ${quote(`__warren_command_is ${quote(c.name)}`)} -l ${f.slice(2)}${c.valueFlags.includes(f) ? ' -r' : ''}`,
        ),
    ),
    "complete -c warren -n '__warren_arg_is id' -a '(__warren_complete ids)'",
    "complete -c warren -n '__warren_arg_is archived' -a '(__warren_complete archived)'",
    "complete -c warren -n '__warren_arg_is type' -a '(__warren_complete types)'",
    `complete -c warren -n '__warren_arg_is shell' -a '${words(SHELLS)}'`,
    "complete -c warren -n '__warren_arg_is file' -F",
  ];
  return `${lines.join('\n')}\n`;
}
