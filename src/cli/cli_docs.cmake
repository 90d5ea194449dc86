# The CLI's bash completion and man page, installed by `cmake --install`.
# The man page is generated from the help text (`grapnel --help`, `grapnel
# --version` and every `grapnel COMMAND --help`) by help2man when it is
# installed (Debian: help2man); without it the page is skipped, with a note.
install(FILES ${CMAKE_SOURCE_DIR}/src/cli/grapnel-completion.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME grapnel)

find_program(GN_HELP2MAN help2man)
if(GN_HELP2MAN)
  set(GN_MAN_PAGE ${CMAKE_BINARY_DIR}/grapnel.1)
  add_custom_command(OUTPUT ${GN_MAN_PAGE}
    COMMAND ${CMAKE_COMMAND} -DCLI=$<TARGET_FILE:grapnel_cli> -DHELP2MAN=${GN_HELP2MAN}
            -DOUT=${GN_MAN_PAGE} -P ${CMAKE_SOURCE_DIR}/src/cli/man.cmake
    DEPENDS grapnel_cli ${CMAKE_SOURCE_DIR}/src/cli/man.cmake
    COMMENT "grapnel.1 from the help text (help2man)" VERBATIM)
  add_custom_target(grapnel_man ALL DEPENDS ${GN_MAN_PAGE})
  install(FILES ${GN_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "grapnel: help2man not found: no man page (apt-get install help2man)")
endif()
