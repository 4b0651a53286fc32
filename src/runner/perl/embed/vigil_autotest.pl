#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# vigil_autotest.pl - the test process of an openQA Perl (or Python) test
# distribution under vigil: loads os-autoinst's own autotest.pm/testapi.pm,
# sets the globals isotovideo sets before it forks "isotovideo: autotest",
# and runs autotest::run_all with vigil as the other end of the JSON-line
# socket (inherited fd, argv[0]). Owns nothing else: no VM, no matching.
#
# Usage (by vigil's runner; cwd = the job's pool dir holding vars.json):
#   perl vigil_autotest.pl FD
# Environment: VIGIL_OS_AUTOINST (default /usr/lib/os-autoinst).
use strict;
use warnings;
no warnings 'once';    # os-autoinst's globals are set here, read there
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Spec;
use IO::Handle;
use POSIX ();

my $OS_AUTOINST;
my $INTERFACE = 34;    # OpenQA::Isotovideo::Interface::version of os-autoinst 4.6

BEGIN {
    $OS_AUTOINST = $ENV{VIGIL_OS_AUTOINST} || '/usr/lib/os-autoinst';
    my $here = dirname(abs_path(__FILE__));
    # vigil's tinycv must win over Debian's (which maps OpenCV).
    unshift @INC, "$here/lib", $OS_AUTOINST;
}

my $fd = shift @ARGV;
die "usage: vigil_autotest.pl FD\n" unless defined $fd && $fd =~ /^[0-9]+\z/;
open(my $sock, '+<&=', $fd) or die "vigil_autotest: fd $fd: $!\n";
$sock->autoflush(1);
$0 = 'vigil: autotest';
$ENV{LC_ALL} = $ENV{LANG} = 'en_US.UTF-8';    # as isotovideo

# What autotest::start_process does in its child: load tinycv (here ours).
require tinycv;
die "vigil_autotest: tinycv from $INC{'tinycv.pm'} is not vigil's\n" unless ($tinycv::VERSION // '') eq 'vigil';

require OpenQA::Isotovideo::Interface;
if ($OpenQA::Isotovideo::Interface::version != $INTERFACE) {
    die "vigil_autotest: os-autoinst in $OS_AUTOINST speaks test API interface "
      . "$OpenQA::Isotovideo::Interface::version, vigil speaks $INTERFACE (os-autoinst 4.6, Debian 12)\n";
}

require bmwqemu;
$bmwqemu::scriptdir = $OS_AUTOINST;
# Never bmwqemu::init: it empties testresults/, which vigil owns.
die "vigil_autotest: no vars.json in " . Cwd::getcwd() . "\n" unless -f 'vars.json';
bmwqemu::load_vars();

require myjsonrpc;
# An EOF from vigil ends the process like isotovideo's SIGTERM (result of
# the running module saved as canceled); an error reply dies in the test.
{
    no warnings 'redefine';
    my $read_json = \&myjsonrpc::read_json;
    *myjsonrpc::read_json = sub {
        my ($s) = @_;
        my $rsp = $read_json->(@_);
        return $rsp unless defined $s && fileno($s) == fileno($sock);
        if (!defined $rsp) {
            bmwqemu::diag('vigil closed the connection');
            autotest::handle_sigterm('EOF') if defined &autotest::handle_sigterm;
            POSIX::_exit(1);
        }
        die "vigil: $rsp->{vigil_error}\n" if ref $rsp eq 'HASH' && exists $rsp->{vigil_error};
        return $rsp;
    };
}

sub ask {
    my ($cmd, %args) = @_;
    myjsonrpc::send_json($sock, {cmd => $cmd, %args});
    return myjsonrpc::read_json($sock);
}

ask('vigil_hello', interface => $INTERFACE, os_autoinst => $OS_AUTOINST, perl => "$^V", pid => $$);

require autotest;
require testapi;
require distribution;
require needle;
require OpenQA::Isotovideo::Utils;

# Consoles live in vigil, not in Perl objects: add_console records the
# table (name, backend class, arguments) and returns a plain record.
my @consoles;
my $scheduled = 0;
{
    no warnings 'redefine';
    *distribution::add_console = sub {
        my ($self, $name, $class, $args) = @_;
        my $c = bless {testapi_console => $name, class => $class, args => $args // {}}, 'vigil::console';
        $self->{consoles}->{$name} = $c;
        my %entry = (name => $name, class => $class, args => $args // {});
        push @consoles, \%entry;
        ask('vigil_add_console', console => \%entry) if $scheduled;
        return $c;
    };
}

# What isotovideo's Runner::prepare does before it forks the test process.
$testapi::distri = distribution->new;
OpenQA::Isotovideo::Utils::load_test_schedule();
testapi::init();
my $needles_dir = $bmwqemu::vars{NEEDLES_DIR} // needle::default_needles_dir();
unless (-d $needles_dir) {
    die "vigil_autotest: needles directory '$needles_dir' not found\n" if File::Spec->file_name_is_absolute($needles_dir);
    $needles_dir = "$bmwqemu::vars{CASEDIR}/$needles_dir";
    die "vigil_autotest: needles directory '$needles_dir' not found\n" unless -d $needles_dir;
}
needle::set_needles_dir($needles_dir);    # not needle::init: vigil loads the needles
bmwqemu::save_vars();

ask('vigil_schedule', consoles => \@consoles, needles_dir => $needles_dir, serialdev => $testapi::serialdev);
$scheduled = 1;

# A module's set_var()s reach vigil's variables when it ends: vars.json
# saved (with the secrets, as set_var(..., reload_needles => 1) saves it)
# before set_current_test(undef), which vigil answers by reading it back.
# run_all's last save (without secrets) is read back after tests_done.
{
    no warnings 'redefine';
    my $set_current_test = \&autotest::set_current_test;
    *autotest::set_current_test = sub {
        bmwqemu::save_vars() unless defined $_[0];
        return $set_current_test->(@_);
    };
}

$autotest::isotovideo = $sock;
$SIG{TERM} = \&autotest::handle_sigterm;
$SIG{INT} = $SIG{HUP} = $SIG{CHLD} = 'DEFAULT';
autotest::run_all();    # sends tests_done and _exit(0)s

package vigil::console;
# The test process's record of a console; the console itself is vigil's.
sub backend { return }
our $AUTOLOAD;
sub AUTOLOAD {
    my $name = $AUTOLOAD =~ s/.*:://r;
    die "vigil: console '$_[0]->{testapi_console}' ($_[0]->{class}) has no '$name' in the test process; use console('...')->$name\n";
}
sub DESTROY { }
