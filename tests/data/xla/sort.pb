
Q
x0Placeholder*
_user_specified_namex0*
dtype0*
shape
:

XlaSortXlaSortx0*
T0
"
out0IdentityXlaSort*
T0
#
IdentityIdentityout0*
T0"ª