
h
aConst",/job:localhost/replica:0/task:0/device:CPU:0*!
valueB"œ>‡ÛŸ?Í• ¿*
dtype0
p
bConst",/job:localhost/replica:0/task:0/device:CPU:0*)
value B"³…=Bä@2-@vÆÀ*
dtype0
E
s/p0Expa",/job:localhost/replica:0/task:0/device:CPU:0*
T0
J
s/abs0Abss/p0",/job:localhost/replica:0/task:0/device:CPU:0*
T0
F
s/p1Sqrtb",/job:localhost/replica:0/task:0/device:CPU:0*
T0
J
s/abs1Abss/p1",/job:localhost/replica:0/task:0/device:CPU:0*
T0
F
s/p2Tanha",/job:localhost/replica:0/task:0/device:CPU:0*
T0
J
s/neg0Negs/p2",/job:localhost/replica:0/task:0/device:CPU:0*
T0
H
s/p3Squareb",/job:localhost/replica:0/task:0/device:CPU:0*
T0
J
s/neg1Negs/p3",/job:localhost/replica:0/task:0/device:CPU:0*
T0
O
out0Identitys/abs0",/job:localhost/replica:0/task:0/device:CPU:0*
T0
O
out1Identitys/abs1",/job:localhost/replica:0/task:0/device:CPU:0*
T0
O
out2Identitys/neg0",/job:localhost/replica:0/task:0/device:CPU:0*
T0
O
out3Identitys/neg1",/job:localhost/replica:0/task:0/device:CPU:0*
T0"ª