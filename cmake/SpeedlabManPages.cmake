# cmake -DSPEEDLAB=<program> -DOUT=<folder> -DDATE=<date> [-DGZIP=<gzip>] -P SpeedlabManPages.cmake
# Writes the program's manual pages into OUT (`speedlab help-man --out OUT`, one page per
# command and speedlab.1) and compresses each with gzip -9n when GZIP is given.
execute_process(COMMAND ${SPEEDLAB} help-man --out ${OUT} --date ${DATE} RESULT_VARIABLE rc OUTPUT_VARIABLE pages
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SPEEDLAB} help-man --out ${OUT} failed (${rc}): ${err}")
endif()
if(GZIP)
  string(REPLACE "\n" ";" pages "${pages}")
  foreach(page IN LISTS pages)
    if(page)
      execute_process(COMMAND ${GZIP} -9nf ${page} RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${GZIP} -9nf ${page} failed (${rc})")
      endif()
    endif()
  endforeach()
endif()
