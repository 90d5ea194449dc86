# cmake -DCLI=path/to/grapnel -DHELP2MAN=help2man -DOUT=grapnel.1 -P man.cmake
# help2man reads `grapnel --help` and `--version`; each command's own help
# goes into a COMMANDS section through an include file.
execute_process(COMMAND ${CLI} --help OUTPUT_VARIABLE main RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CLI} --help failed")
endif()
string(REGEX MATCHALL "\n  [a-z]+ " cmds "${main}")
set(inc "[DESCRIPTION]\ngrapnel does for TensorFlow graphs what Grappler does: it loads a GraphDef or SavedModel, optimizes it with Grappler-compatible passes, segments it into engine ops as TF-TRT does, runs it on the CPU reference backend or CUDA, and saves it in TensorFlow's formats.\n\n[COMMANDS]\n")
foreach(c ${cmds})
  string(STRIP "${c}" c)
  execute_process(COMMAND ${CLI} ${c} --help OUTPUT_VARIABLE h RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${CLI} ${c} --help failed")
  endif()
  string(REPLACE "\\" "\\e" h "${h}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" h "${h}")
  string(APPEND inc ".SS ${c}\n.nf\n${h}.fi\n")
endforeach()
string(APPEND inc "\n[SEE ALSO]\nThe documents under docs/ in the source tree: docs/cli_json.md (the --json documents), docs/python_api.md.\n")
file(WRITE ${OUT}.h2m "${inc}")
execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr --section=1
                        "--name=a Grappler-style optimizer for TensorFlow graphs" --include=${OUT}.h2m
                        --output=${OUT} ${CLI}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed on ${CLI}")
endif()
