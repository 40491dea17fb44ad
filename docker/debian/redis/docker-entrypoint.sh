#!/bin/sh
# redis-server without a configuration file runs with protected mode off, as in the official
# redis image (which compiles that default in), so that other containers can connect. An explicit
# --protected-mode, a configuration file (the first argument) or --version/--help run as given;
# anything else than redis-server too.
if [ "$1" = redis-server ]; then
  case "${2:-}" in
    -v | --version | -h | --help | --test-memory | --check-system) ;;
    '' | -*)
      case " $* " in
        *" --protected-mode "*) ;;
        *) set -- "$@" --protected-mode no ;;
      esac ;;
  esac
fi
exec "$@"
