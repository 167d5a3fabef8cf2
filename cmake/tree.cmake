# tree.cmake — run at every build (cmake -P): writes OUT, a header defining ILAB_TREE as the
# source tree's `git describe --always --dirty` ("unknown" outside a git checkout), rewritten
# only when it changes so that an unchanged tree recompiles nothing. The results page names it.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --tags
                OUTPUT_VARIABLE tree ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT tree)
  set(tree "unknown")
endif()
set(text "#define ILAB_TREE \"${tree}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUT}" "${text}")
endif()
