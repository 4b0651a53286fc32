#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# oq_devws.pl - what a browser does in openQA's developer mode, for
# interop_openqa.sh: log in to openQA's web UI (Fake auth, user Demo),
# open the livehandler's developer ws-proxy of job JOB with that session,
# and drive the job: wait until it is paused at module FIRST, ask it to
# pause at module SECOND too (set_pause_at_test), resume, see the pause at
# SECOND come back, resume again, see the resume. Each message received is
# printed as one line "<- JSON"; the milestones as "ok: ...". Exit 0 when
# all came, 1 otherwise. Reconnects (bounded) while the livehandler cannot
# reach the job's command server yet (the worker's status has not told
# openQA where it is). Uses openQA's own Mojolicious.
#   perl oq_devws.pl WEBUI_URL LIVEHANDLER_URL JOB FIRST SECOND
use strict;
use warnings;
use Mojo::UserAgent;
use Mojo::IOLoop;
use Mojo::JSON qw(encode_json);

$| = 1;
my ($web, $live, $job, $first, $second) = @ARGV;
die "usage: oq_devws.pl WEBUI_URL LIVEHANDLER_URL JOB FIRST SECOND\n" unless defined $second;
my $ua = Mojo::UserAgent->new(max_redirects => 3, inactivity_timeout => 600);
my $login = $ua->get("$web/login")->result;
die "login: HTTP " . $login->code . "\n" unless $login->code == 200;
(my $ws_url = "$live/liveviewhandler/tests/$job/developer/ws-proxy") =~ s/^http/ws/;

my $stage = 'first';    # first -> second -> resumed
my $tries = 0;
my $done = 0;

sub step {
	my ($tx, $msg) = @_;
	my $d = $msg->{data};
	return unless ref $d eq 'HASH' && ($msg->{what} // '') eq 'cmdsrvmsg';
	my $paused = $d->{test_execution_paused} // ($d->{paused} ? $d->{reason} : undef);
	if ($stage eq 'first' && $paused && $paused =~ /reached module \Q$first\E$/) {
		print "ok: paused at $first\n";
		$stage = 'second';
		$tx->send({json => {cmd => 'set_pause_at_test', name => $second}});
		$tx->send({json => {cmd => 'resume_test_execution'}});
	}
	elsif ($stage eq 'second' && $d->{paused} && ($d->{reason} // '') =~ /reached module \Q$second\E$/) {
		print "ok: paused at $second\n";
		$stage = 'resumed';
		$tx->send({json => {cmd => 'resume_test_execution'}});
	}
	elsif ($stage eq 'resumed' && exists $d->{resume_test_execution}) {
		print "ok: resumed\n";
		$done = 1;
		$tx->finish;
	}
}

sub open_session {
	$tries++;
	$ua->websocket(
		$ws_url => sub {
			my ($ua, $tx) = @_;
			unless ($tx->is_websocket) {
				print "no websocket: HTTP " . ($tx->res->code // '?') . "\n";
				return Mojo::IOLoop->stop;
			}
			$tx->on(json => sub { print '<- ', encode_json($_[1]), "\n"; step($tx, $_[1]) });
			$tx->on(finish => sub {
				return Mojo::IOLoop->stop if $done;
				# Not reachable yet, or lost: again, a bounded number of times.
				return Mojo::IOLoop->stop if $tries >= 300;
				Mojo::IOLoop->timer(1 => \&open_session);
			});
		});
}

open_session();
Mojo::IOLoop->timer(900 => sub { print "gave up waiting (stage $stage)\n"; Mojo::IOLoop->stop });
Mojo::IOLoop->start;
exit($done ? 0 : 1);
