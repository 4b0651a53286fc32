/* SPDX-License-Identifier: MIT */
/* test_qemu.c - the QEMU command line, process control (with sh standing
 * in for QEMU), the TCG probe image, and serial capture over a socket. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "unit.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"
#include "util/str.h"
#include "util/time.h"
#include "vm/qemu.h"
#include "vm/serial.h"

static const char *lookup(void *ctx, const char *key)
{
	const char *const *kv = ctx;

	for (; kv[0]; kv += 2)
		if (!strcmp(kv[0], key))
			return kv[1];
	return NULL;
}

/* Index of the first argv element equal to s, or -1. */
static int find(const struct qemu_cmd *c, const char *s)
{
	size_t i;

	for (i = 0; i < c->argc; i++)
		if (!strcmp(c->argv[i], s))
			return (int)i;
	return -1;
}

static const char *after(const struct qemu_cmd *c, const char *opt, const char *prefix)
{
	size_t i;

	for (i = 0; i + 1 < c->argc; i++)
		if (!strcmp(c->argv[i], opt) && str_starts_with(c->argv[i + 1], prefix))
			return c->argv[i + 1];
	return NULL;
}

TEST(qemu_cmd_defaults)
{
	const char *kv[] = { NULL };
	struct qemu_cmd c;
	char err[256] = "";

	CHECK_INT(qemu_cmd_build(lookup, kv, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(c.argv[0], "qemu-system-x86_64");
	CHECK(c.argv[c.argc] == NULL);
	CHECK_STR(after(&c, "-accel", ""), "tcg");
	CHECK_STR(after(&c, "-m", ""), "1024");
	CHECK_STR(after(&c, "-smp", ""), "1");
	CHECK_STR(after(&c, "-device", "VGA"), "VGA,edid=on,xres=1024,yres=768");
	CHECK_STR(after(&c, "-nic", ""), "none");
	CHECK(find(&c, "-no-shutdown") > 0 && find(&c, "-S") > 0);
	CHECK_STR(after(&c, "-display", ""), "none");
	CHECK_STR(after(&c, "-vnc", ""), "unix:/w/vnc.sock");
	CHECK_STR(after(&c, "-qmp", ""), "unix:/w/qmp.sock,server=on,wait=off");
	CHECK_STR(after(&c, "-chardev", ""), "socket,id=serial0,path=/w/serial.sock,server=on,wait=off");
	CHECK_STR(after(&c, "-serial", ""), "chardev:serial0");
	CHECK(after(&c, "-device", "qemu-xhci") && after(&c, "-device", "usb-tablet"));
	/* os-autoinst's sound card: the audiodev snd0 that wavcapture records */
	CHECK_STR(after(&c, "-audiodev", ""), "none,id=snd0");
	CHECK(after(&c, "-device", "intel-hda"));
	CHECK_STR(after(&c, "-device", "hda-"), "hda-output,audiodev=snd0");
	CHECK(find(&c, "-boot") < 0);
	/* NUMDISKS defaults to 1 as in os-autoinst: one blank 10 GiB disk,
	 * then the device-less scratch disk for snapshots' VM state. */
	CHECK_STR(after(&c, "-drive", "id=hd0"), "id=hd0,if=none,format=qcow2,file=/w/hd0-overlay.qcow2,cache=unsafe,discard=unmap");
	CHECK_STR(after(&c, "-device", "virtio-blk"), "virtio-blk-pci,drive=hd0,id=hd0-device,serial=hd0");
	CHECK_STR(after(&c, "-drive", "id=scratch"), "id=scratch,if=none,format=qcow2,file=/w/scratch.qcow2,cache=unsafe");
	CHECK_INT(c.noverlays, 2);
	CHECK(!c.overlays[0].backing);
	CHECK_STR(c.overlays[0].size, "10G");
	CHECK_STR(c.overlays[1].size, "1G");
	CHECK_STR(after(&c, "-device", "virtio-rng"), "virtio-rng-pci,rng=rng0");
	CHECK(find(&c, "-bios") < 0 && !after(&c, "-drive", "id=pflash"));
	CHECK_STR(c.vnc_path, "/w/vnc.sock");
	CHECK_INT(c.xres, 1024);
	qemu_cmd_release(&c);
}

TEST(qemu_cmd_settings)
{
	const char *kv[] = {
		"QEMU", "aarch64", "QEMURAM", "2048", "QEMUCPUS", "4", "XRES", "800", "YRES", "600",
		"QEMUVGA", "virtio-vga", "NICTYPE", "user", "ISO", "/img/x.iso",
		"HDD_1", "/img/a.qcow2", "NUMDISKS", "2", "HDDSIZEGB", "20",
		"KERNEL", "/k/linux", "INITRD", "/k/initrd.gz", "APPEND", "console=ttyS0 quiet",
		"QEMU_APPEND", "-rtc  base=utc -no-reboot", NULL,
	};
	struct qemu_cmd c;
	char err[256] = "";
	int i;

	CHECK_INT(qemu_cmd_build(lookup, kv, "/w", "kvm", &c, err, sizeof(err)), 0);
	CHECK_STR(c.argv[0], "qemu-system-aarch64");
	CHECK_STR(after(&c, "-accel", ""), "kvm");
	CHECK_STR(after(&c, "-m", ""), "2048");
	CHECK_STR(after(&c, "-smp", ""), "4");
	CHECK_STR(after(&c, "-device", "virtio-vga"), "virtio-vga,edid=on,xres=800,yres=600");
	CHECK_STR(after(&c, "-nic", ""), "user,id=qanet0,model=virtio-net-pci,mac=52:54:00:12:34:56,restrict=on");
	CHECK_STR(after(&c, "-boot", ""), "once=d");
	CHECK_STR(after(&c, "-drive", "id=cd0"), "id=cd0,if=none,media=cdrom,format=qcow2,file=/w/cd0-overlay.qcow2");
	CHECK_STR(after(&c, "-drive", "id=hd0"), "id=hd0,if=none,format=qcow2,file=/w/hd0-overlay.qcow2,cache=unsafe,discard=unmap");
	CHECK(after(&c, "-drive", "id=hd1"));
	CHECK_STR(after(&c, "-device", "virtio-blk-pci"), "virtio-blk-pci,drive=hd0,id=hd0-device,serial=hd0");
	CHECK_INT(c.noverlays, 4);
	CHECK_STR(c.overlays[0].backing, "/img/a.qcow2");
	CHECK(!c.overlays[0].backing_fmt); /* detected when created */
	CHECK(!c.overlays[1].backing);
	CHECK_STR(c.overlays[1].size, "20G");
	CHECK_STR(c.overlays[2].path, "/w/scratch.qcow2");
	CHECK_STR(c.overlays[3].backing, "/img/x.iso");
	CHECK_STR(c.overlays[3].backing_fmt, "raw");
	CHECK_STR(after(&c, "-kernel", ""), "/k/linux");
	CHECK_STR(after(&c, "-initrd", ""), "/k/initrd.gz");
	CHECK_STR(after(&c, "-append", ""), "console=ttyS0 quiet");
	/* QEMU_APPEND comes last, split on spaces. */
	i = (int)c.argc - 3;
	CHECK_STR(c.argv[i], "-rtc");
	CHECK_STR(c.argv[i + 1], "base=utc");
	CHECK_STR(c.argv[i + 2], "-no-reboot");
	qemu_cmd_release(&c);
}

TEST(qemu_cmd_rejects_bad_settings)
{
	const char *bad_ram[] = { "QEMURAM", "lots", NULL };
	const char *bad_vga[] = { "QEMUVGA", "VGA,romfile=/x", NULL };
	const char *bad_nic[] = { "NICTYPE", "tap", NULL };
	const char *opts[] = { "NICTYPE", "user", "NICTYPE_USER_OPTIONS", "hostfwd=tcp::2222-:22", NULL };
	struct qemu_cmd c;
	char err[256] = "";

	CHECK_INT(qemu_cmd_build(lookup, bad_ram, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "QEMURAM"));
	CHECK_INT(qemu_cmd_build(lookup, bad_vga, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK_INT(qemu_cmd_build(lookup, bad_nic, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "NICTYPE=tap needs NICVLAN"));
	CHECK_INT(qemu_cmd_build(lookup, bad_ram + 2, "/w", "hvf", &c, err, sizeof(err)), ERR_INVALID);
	CHECK_INT(qemu_cmd_build(lookup, opts, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(after(&c, "-nic", ""), "user,id=qanet0,model=virtio-net-pci,mac=52:54:00:12:34:56,hostfwd=tcp::2222-:22");
	qemu_cmd_release(&c);
}

/* NICTYPE=tap: no tap device, QEMU's socket netdev on NICVLAN's multicast group. */
TEST(qemu_cmd_tap_nic_is_socket_multicast)
{
	const char *one_host[] = { "NICTYPE", "tap", "NICVLAN", "7", "NICMAC", "52:54:00:00:00:07", NULL };
	const char *hosts[] = { "NICTYPE", "tap", "NICVLAN", "513", "NICMCAST_PORT", "9526", "NICMCAST_LOCALADDR",
				"192.0.2.2", "NICMODEL", "e1000", NULL };
	const char *two[] = { "NICTYPE", "tap", "NICVLAN", "1,2", NULL };
	const char *port[] = { "NICTYPE", "tap", "NICVLAN", "1", "NICMCAST_PORT", "70000", NULL };
	const char *comma[] = { "NICTYPE", "tap", "NICVLAN", "1", "NICMCAST_LOCALADDR", "1.2.3.4,x=y", NULL };
	struct qemu_cmd c;
	char err[256] = "";

	CHECK_INT(qemu_cmd_build(lookup, one_host, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(after(&c, "-nic", ""),
		  "socket,id=qanet0,model=virtio-net-pci,mac=52:54:00:00:00:07,mcast=239.255.0.7:21100,localaddr=127.0.0.1");
	qemu_cmd_release(&c);
	CHECK_INT(qemu_cmd_build(lookup, hosts, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(after(&c, "-nic", ""),
		  "socket,id=qanet0,model=e1000,mac=52:54:00:12:34:56,mcast=239.255.2.1:9526,localaddr=192.0.2.2");
	qemu_cmd_release(&c);
	CHECK_INT(qemu_cmd_build(lookup, two, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "NICVLAN='1,2'"));
	CHECK_INT(qemu_cmd_build(lookup, port, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "NICMCAST_PORT"));
	CHECK_INT(qemu_cmd_build(lookup, comma, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "NICMCAST_LOCALADDR"));
}

TEST(qemu_cmd_tap_nic_relay_is_stream_to_hub)
{
	const char *relay[] = { "NICTYPE", "tap", "NICVLAN", "7", "NICNET", "relay", "NICRELAY_PORT", "40123",
				"NICMAC", "52:54:00:00:00:07", NULL };
	const char *noport[] = { "NICTYPE", "tap", "NICVLAN", "7", "NICNET", "relay", NULL };
	const char *badport[] = { "NICTYPE", "tap", "NICVLAN", "7", "NICNET", "relay", "NICRELAY_PORT", "0", NULL };
	const char *mode[] = { "NICTYPE", "tap", "NICVLAN", "7", "NICNET", "gre", NULL };
	const char *mcast[] = { "NICTYPE", "tap", "NICVLAN", "7", "NICNET", "mcast", NULL };
	struct qemu_cmd c;
	char err[256] = "";

	CHECK_INT(qemu_cmd_build(lookup, relay, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(after(&c, "-netdev", ""), "stream,id=qanet0,server=off,addr.type=inet,addr.host=127.0.0.1,addr.port=40123");
	CHECK_STR(after(&c, "-device", "virtio-net-pci,netdev"), "virtio-net-pci,netdev=qanet0,mac=52:54:00:00:00:07");
	CHECK(!after(&c, "-nic", "socket"));
	qemu_cmd_release(&c);
	CHECK_INT(qemu_cmd_build(lookup, mcast, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK(strstr(after(&c, "-nic", ""), "mcast=239.255.0.7:21100"));
	qemu_cmd_release(&c);
	CHECK_INT(qemu_cmd_build(lookup, noport, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "NICRELAY_PORT"));
	CHECK_INT(qemu_cmd_build(lookup, badport, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "NICRELAY_PORT='0'"));
	CHECK_INT(qemu_cmd_build(lookup, mode, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "NICNET='gre'"));
}

TEST(qemu_cmd_uefi)
{
	const char *kv[] = { "UEFI", "1", "ISO", "/img/x.iso", "BOOTFROM", "cdrom", NULL };
	const char *own[] = { "UEFI", "1", "UEFI_PFLASH_CODE", "fw/MY_CODE.fd", NULL };
	const char *arm[] = { "UEFI", "1", "QEMU", "aarch64", NULL };
	const char *nocode[] = { "UEFI", "1", "UEFI_PFLASH_CODE", "/fw/efi.bin", NULL };
	const char *half[] = { "UEFI", "1", "UEFI_PFLASH_VARS", "/v.qcow2", NULL };
	struct qemu_cmd c;
	char err[256] = "", *cwd;

	CHECK_INT(qemu_cmd_build(lookup, kv, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(after(&c, "-drive", "id=pflash-code"),
		  "id=pflash-code,if=pflash,format=qcow2,file=/w/pflash-code-overlay.qcow2,unit=0,readonly=on");
	CHECK_STR(after(&c, "-drive", "id=pflash-vars"),
		  "id=pflash-vars,if=pflash,format=qcow2,file=/w/" QEMU_PFLASH_VARS_FILE ",unit=1");
	/* Debian's matching 4M pair; the files themselves are never written. */
	CHECK_STR(c.overlays[c.noverlays - 2].backing, "/usr/share/OVMF/OVMF_CODE_4M.fd");
	CHECK_STR(c.overlays[c.noverlays - 1].backing, "/usr/share/OVMF/OVMF_VARS_4M.fd");
	/* OVMF boots by bootindex, never by -boot. */
	CHECK(find(&c, "-boot") < 0);
	CHECK_STR(after(&c, "-device", "ide-cd"), "ide-cd,drive=cd0,id=cd0-device,serial=cd0,bootindex=0");
	qemu_cmd_release(&c);

	CHECK_INT(qemu_cmd_build(lookup, own, "/w", "tcg", &c, err, sizeof(err)), 0);
	cwd = path_abs("fw/MY_VARS.fd");
	CHECK_STR(c.overlays[c.noverlays - 1].backing, cwd);
	free(cwd);
	qemu_cmd_release(&c);
	CHECK_INT(qemu_cmd_build(lookup, arm, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "UEFI_PFLASH_CODE"));
	CHECK_INT(qemu_cmd_build(lookup, nocode, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "set UEFI_PFLASH_VARS"));
	/* A published vars file alone: with the default code. */
	CHECK_INT(qemu_cmd_build(lookup, half, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(c.overlays[c.noverlays - 2].backing, "/usr/share/OVMF/OVMF_CODE_4M.fd");
	CHECK_STR(c.overlays[c.noverlays - 1].backing, "/v.qcow2");
	qemu_cmd_release(&c);
}

TEST(qemu_cmd_disks_and_boot)
{
	const char *kv[] = {
		"NUMDISKS", "2", "HDD_1", "/img/a.qcow2", "HDDMODEL", "scsi-hd", "HDDMODEL_2", "nvme",
		"HDDSIZEGB_2", "3", "CDMODEL", "scsi-cd", "ISO", "/img/x.iso", "ISO_1", "/img/y.iso",
		"BOOT_HDD_IMAGE", "1", "BIOS", "bios-256k.bin", NULL,
	};
	const char *none[] = { "NUMDISKS", "0", "ISO_2", "/img/y.iso", "BOOTFROM", "d", NULL };
	const char *usb[] = { "ISO", "/img/x.iso", "USBBOOT", "1", NULL };
	const char *bad[] = { "BOOTFROM", "n", NULL };
	struct qemu_cmd c;
	char err[256] = "";

	CHECK_INT(qemu_cmd_build(lookup, kv, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(after(&c, "-device", "virtio-scsi"), "virtio-scsi-pci,id=scsi0");
	CHECK_STR(after(&c, "-device", "scsi-hd"), "scsi-hd,drive=hd0,id=hd0-device,serial=hd0,bootindex=0");
	CHECK_STR(after(&c, "-device", "nvme"), "nvme,drive=hd1,id=hd1-device,serial=hd1");
	CHECK_STR(after(&c, "-device", "scsi-cd,drive=cd0"), "scsi-cd,drive=cd0,id=cd0-device,serial=cd0");
	CHECK_STR(after(&c, "-device", "scsi-cd,drive=cd1"), "scsi-cd,drive=cd1,id=cd1-device,serial=cd1");
	CHECK_STR(after(&c, "-boot", ""), "order=c");
	CHECK_STR(after(&c, "-bios", ""), "/usr/share/qemu/bios-256k.bin");
	CHECK_STR(c.overlays[0].backing, "/img/a.qcow2");
	CHECK_STR(c.overlays[1].size, "3G");
	CHECK_STR(c.overlays[4].backing, "/img/y.iso");
	CHECK_STR(c.overlays[4].path, "/w/cd1-overlay.qcow2");
	qemu_cmd_release(&c);

	/* No disk; the first ISO_n boots when ISO is unset. */
	CHECK_INT(qemu_cmd_build(lookup, none, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK(!after(&c, "-drive", "id=hd0"));
	CHECK_STR(after(&c, "-device", "ide-cd"), "ide-cd,drive=cd2,id=cd2-device,serial=cd2,bootindex=0");
	CHECK_STR(after(&c, "-boot", ""), "order=d");
	qemu_cmd_release(&c);

	CHECK_INT(qemu_cmd_build(lookup, usb, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(after(&c, "-device", "usb-storage"), "usb-storage,drive=usbstick,id=usbstick-device,bootindex=0");
	CHECK(!after(&c, "-drive", "id=cd0") && find(&c, "-boot") < 0);
	qemu_cmd_release(&c);
	CHECK_INT(qemu_cmd_build(lookup, bad, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "BOOTFROM"));
}

TEST(qemu_cmd_machine_vars)
{
	const char *kv[] = {
		"QEMUVGA", "cirrus", "QEMUCPUS", "4", "QEMUSOCKETS", "1", "QEMUCORES", "2", "QEMUTHREADS", "2",
		"NICTYPE", "user", "NICMAC", "52:54:00:aa:bb:cc", "NICMODEL", "virtio-net", "QEMU_VIRTIO_RNG", "0",
		"QEMU_SMBIOS", "type=1,serial=abc", "QEMU_APPEND", "accel tcg -rtc base=utc -no-reboot", NULL,
	};
	const char *video[] = { "QEMUVGA", "qxl", "QEMU_VIDEO_DEVICE", "virtio-gpu-pci",
				"QEMU_VIDEO_DEVICE_OPTIONS", "max_outputs=1", NULL };
	struct qemu_cmd c;
	char err[256] = "";
	int i;

	CHECK_INT(qemu_cmd_build(lookup, kv, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(c.argv[2], "cirrus-vga");
	CHECK_STR(after(&c, "-smp", ""), "4,sockets=1,cores=2,threads=2");
	CHECK_STR(after(&c, "-nic", ""), "user,id=qanet0,model=virtio-net-pci,mac=52:54:00:aa:bb:cc,restrict=on");
	CHECK(!after(&c, "-device", "virtio-rng"));
	CHECK_STR(after(&c, "-smbios", ""), "type=1,serial=abc");
	/* os-autoinst's form: each part's first word gets its '-'. */
	i = (int)c.argc - 5;
	CHECK_STR(c.argv[i], "-accel");
	CHECK_STR(c.argv[i + 1], "tcg");
	CHECK_STR(c.argv[i + 2], "-rtc");
	CHECK_STR(c.argv[i + 3], "base=utc");
	CHECK_STR(c.argv[i + 4], "-no-reboot");
	qemu_cmd_release(&c);
	{
		const char *snd[] = { "QEMU_AUDIODEV", "AC97", "QEMU_AUDIOBACKEND", "wav,path=/tmp/x.wav", NULL };
		CHECK_INT(qemu_cmd_build(lookup, snd, "/w", "tcg", &c, err, sizeof(err)), 0);
		CHECK_STR(after(&c, "-audiodev", ""), "wav,path=/tmp/x.wav,id=snd0");
		CHECK_STR(after(&c, "-device", "AC97"), "AC97,audiodev=snd0");
		CHECK(!after(&c, "-device", "intel-hda") && !after(&c, "-device", "hda-output"));
		qemu_cmd_release(&c);
	}
	CHECK_INT(qemu_cmd_build(lookup, video, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(c.argv[2], "virtio-gpu-pci,edid=on,xres=1024,yres=768,max_outputs=1");
	qemu_cmd_release(&c);
}

TEST(qemu_cmd_tpm)
{
	const char *own[] = { "QEMUTPM", "1", NULL };
	const char *shared[] = { "QEMUTPM", "instance", "WORKER_INSTANCE", "3", "QEMUTPM_PATH_PREFIX", "/tmp/mytpm",
				 "QEMUTPM_VER", "1.2", "QEMU", "aarch64", NULL };
	const char *bad[] = { "QEMUTPM", "1", "QEMUTPM_VER", "3", NULL };
	struct qemu_cmd c;
	char err[256] = "";

	CHECK_INT(qemu_cmd_build(lookup, own, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(c.tpm_sock, "/w/swtpm-sock");
	CHECK(c.tpm_own && c.tpm2);
	CHECK_STR(after(&c, "-chardev", "socket,id=chrtpm"), "socket,id=chrtpm,path=/w/swtpm-sock");
	CHECK_STR(after(&c, "-tpmdev", ""), "emulator,id=tpm0,chardev=chrtpm");
	CHECK_STR(after(&c, "-device", "tpm"), "tpm-tis,tpmdev=tpm0");
	qemu_cmd_release(&c);
	/* os-autoinst's shared form: PREFIX<instance>/swtpm-sock. */
	CHECK_INT(qemu_cmd_build(lookup, shared, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(c.tpm_sock, "/tmp/mytpm3/swtpm-sock");
	CHECK(!c.tpm_own && !c.tpm2);
	CHECK_STR(after(&c, "-device", "tpm"), "tpm-tis-device,tpmdev=tpm0");
	qemu_cmd_release(&c);
	CHECK_INT(qemu_cmd_build(lookup, bad, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "QEMUTPM_VER"));
	CHECK_INT(qemu_cmd_build(lookup, own + 2, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK(!c.tpm_sock && !after(&c, "-tpmdev", ""));
	qemu_cmd_release(&c);
}

TEST(qemu_unsupported_vars_named)
{
	const char *kv[] = { "QEMU_NUMA", "1", "HDDNUMQUEUES_2", "4", "MY_TEST_VAR", "1",
			     "UEFI", "1", "PXEBOOT", "", NULL };
	const char *none[] = { "ISO", "/x.iso", NULL };
	char buf[512];

	qemu_unsupported_vars(lookup, (void *)kv, buf, sizeof(buf));
	CHECK(strstr(buf, "HDDNUMQUEUES_2 ("));
	CHECK(strstr(buf, "QEMU_NUMA ("));
	CHECK(!strstr(buf, "MY_TEST_VAR") && !strstr(buf, "UEFI") && !strstr(buf, "PXEBOOT"));
	qemu_unsupported_vars(lookup, (void *)none, buf, sizeof(buf));
	CHECK_STR(buf, "");
	qemu_unsupported_vars(lookup, (void *)kv, buf, 8); /* truncated, still a string */
	CHECK(strlen(buf) < 8);
}

/* A qemu_cmd running sh instead of QEMU. */
static void fake_cmd(struct qemu_cmd *c, const char *script)
{
	const char *kv[] = { NULL };
	char err[256];

	CHECK_INT(qemu_cmd_build(lookup, (void *)kv, unit_tmpdir(), "tcg", c, err, sizeof(err)), 0);
	for (size_t i = 0; i < c->argc; i++)
		free(c->argv[i]);
	c->argv[0] = str_dup("sh");
	c->argv[1] = str_dup("-c");
	c->argv[2] = str_dup(script);
	c->argv[3] = NULL;
	c->argc = 3;
}

TEST(qemu_process_exit_reason)
{
	struct qemu_cmd c;
	struct qemu *q = NULL;
	char err[256] = "", why[512];

	fake_cmd(&c, "echo starting; echo 'qemu-system-x86_64: could not open disk' >&2; exit 3");
	CHECK_INT(qemu_start(&c, &q, err, sizeof(err)), 0);
	while (qemu_running(q))
		time_sleep_ms(10);
	qemu_exit_reason(q, why, sizeof(why));
	CHECK(strstr(why, "qemu exited with status 3"));
	CHECK(strstr(why, "could not open disk"));
	qemu_free(q);
	qemu_cmd_release(&c);
}

TEST(qemu_process_stop_escalates)
{
	struct qemu_cmd c;
	struct qemu *q = NULL;
	char err[256] = "", why[512], up[400], script[600];

	/* Ignores SIGTERM: only SIGKILL ends it. It says so by creating
	 * the file up, which the test waits for however long that takes. */
	snprintf(up, sizeof(up), "%s/up", unit_tmpdir());
	snprintf(script, sizeof(script), "trap '' TERM; : > '%s'; while :; do sleep 0.05; done", up);
	fake_cmd(&c, script);
	CHECK_INT(qemu_start(&c, &q, err, sizeof(err)), 0);
	while (!file_exists(up))
		time_sleep_ms(10);
	CHECK(qemu_running(q));
	why[0] = 'x';
	qemu_exit_reason(q, why, sizeof(why));
	CHECK_STR(why, "");
	qemu_stop(q, NULL);
	CHECK(!qemu_running(q));
	qemu_exit_reason(q, why, sizeof(why));
	CHECK(strstr(why, "signal 9"));
	CHECK(kill(qemu_pid(q), 0) < 0); /* reaped */
	qemu_free(q);
	qemu_cmd_release(&c);
}

TEST(qemu_probe_image_runs_under_tcg)
{
	bool works = false;
	char err[256] = "";

	if (access("/usr/bin/qemu-system-x86_64", X_OK) != 0) {
		fprintf(stderr, "  skipped: no qemu-system-x86_64\n");
		return;
	}
	CHECK_INT(qemu_accel_probe("qemu-system-x86_64", "tcg", 30000, &works, err, sizeof(err)), 0);
	CHECK(works);
	CHECK(qemu_accel_probe("/nonexistent/qemu", "tcg", 5000, &works, err, sizeof(err)) == 0);
	CHECK(!works);
}

TEST(qemu_accel_overrides)
{
	const char *nokvm[] = { "QEMU_NO_KVM", "1", NULL };

	setenv("VIGIL_ACCEL", "kvm", 1);
	CHECK_STR(qemu_accel_select("qemu-system-x86_64", lookup, (void *)nokvm, unit_tmpdir()), "kvm");
	setenv("VIGIL_ACCEL", "tcg", 1);
	CHECK_STR(qemu_accel_select("qemu-system-x86_64", NULL, NULL, unit_tmpdir()), "tcg");
	unsetenv("VIGIL_ACCEL");
	CHECK_STR(qemu_accel_select("qemu-system-x86_64", lookup, (void *)nokvm, unit_tmpdir()), "tcg");
}

/* A stand-in for QEMU's serial chardev: sends a banner, echoes a line
 * back upper-cased, closes. */
static void *serial_peer(void *arg)
{
	int lfd = *(int *)arg, fd = accept(lfd, NULL, NULL);
	char buf[64];
	ssize_t n, i;

	if (fd < 0)
		return NULL;
	if (write(fd, "login: ", 7) != 7)
		goto out;
	n = read(fd, buf, sizeof(buf));
	for (i = 0; i < n; i++)
		if (buf[i] >= 'a' && buf[i] <= 'z')
			buf[i] = (char)(buf[i] - 32);
	if (n > 0 && write(fd, buf, (size_t)n) != n)
		goto out;
out:
	close(fd);
	return NULL;
}

TEST(serial_capture)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct serial *s = NULL;
	char err[256] = "", *log = path_join(unit_tmpdir(), "serial0.txt"), *data;
	struct buf file;
	size_t len, start;
	pthread_t th;
	int lfd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/serial.sock", unit_tmpdir());
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 1) == 0);
	CHECK(pthread_create(&th, NULL, serial_peer, &lfd) == 0);
	CHECK_INT(serial_open(sa.sun_path, log, 5000, &s, err, sizeof(err)), 0);
	while (serial_len(s) < 7)
		CHECK_INT(serial_wait_change(s, serial_len(s), 10000), 0);
	CHECK_INT(serial_write(s, "root\n", 5), 0);
	while (serial_len(s) < 12)
		CHECK_INT(serial_wait_change(s, serial_len(s), 10000), 0);
	CHECK_INT(serial_snapshot(s, 7, &data, &len, &start), 0);
	CHECK_STR(data, "ROOT\n");
	CHECK_INT(start, 7);
	free(data);
	/* The peer closed: waiting for more reports it instead of hanging. */
	CHECK_INT(serial_wait_change(s, 12, 60000), ERR_CLOSED);
	CHECK(!serial_alive(s));
	serial_close(s);
	buf_init(&file, 1024);
	CHECK_INT(file_read_all(log, &file), 0);
	CHECK_STR(file.data, "login: ROOT\n");
	buf_release(&file);
	pthread_join(th, NULL);
	close(lfd);
	free(log);
}

/* The command server (runner/srv/cmdsrv.c): forwarded to QEMU_HOST_IP on a
 * restricted user net, through `vigil cmdsrv-connect`; not otherwise. */
TEST(qemu_cmd_cmdsrv_forward)
{
	const char *fwd[] = { "NICTYPE", "user", "QEMUPORT", "5000", "QEMU_HOST_IP", "10.0.2.100", NULL };
	const char *open_net[] = { "NICTYPE", "user", "QEMUPORT", "5000", "NICTYPE_USER_OPTIONS", "restrict=off",
				   NULL };
	const char *bad[] = { "NICTYPE", "user", "QEMUPORT", "x", NULL };
	struct qemu_cmd c;
	char err[256] = "";
	const char *nic;

	CHECK_INT(qemu_cmd_build(lookup, fwd, "/w", "tcg", &c, err, sizeof(err)), 0);
	nic = after(&c, "-nic", "");
	CHECK(strstr(nic, ",restrict=on,guestfwd=tcp:10.0.2.100:5001-cmd:/"));
	CHECK(str_ends_with(nic, " cmdsrv-connect 5001"));
	qemu_cmd_release(&c);
	CHECK_INT(qemu_user_net_restricted(lookup, (void *)fwd), 1);
	CHECK_INT(qemu_user_net_restricted(lookup, (void *)open_net), 0);
	CHECK_INT(qemu_cmd_build(lookup, open_net, "/w", "tcg", &c, err, sizeof(err)), 0);
	CHECK_STR(after(&c, "-nic", ""), "user,id=qanet0,model=virtio-net-pci,mac=52:54:00:12:34:56,restrict=off");
	qemu_cmd_release(&c);
	CHECK_INT(qemu_cmd_build(lookup, bad, "/w", "tcg", &c, err, sizeof(err)), ERR_INVALID);
	CHECK(strstr(err, "QEMUPORT"));
}
